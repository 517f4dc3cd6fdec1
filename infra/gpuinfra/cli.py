"""The `gpuinfra` command. Only wires stages together; every decision lives in the stages."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.report.render import FORMATS, AnyReport

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile GPU infrastructure specs into Pulumi stacks; validate, preview, police and price them.",
    pretty_exceptions_enable=False,
)


Format = StrEnum("Format", {name: name for name in FORMATS})  # type: ignore[misc]
"""One per renderer module in infra/gpuinfra/report/render/: a new format needs no edit here."""


class SchemaKind(StrEnum):
    stack = "stack"
    org = "org"


StacksArg = Annotated[
    list[str],
    typer.Argument(help="Stack names (Pulumi.<name>.yaml in the Pulumi project's stackConfigDir) or stack file paths."),
]
OrgOpt = Annotated[Path | None, typer.Option("--org", help="Organization file (default: org.yaml beside the stack).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Write the report to this file instead of stdout.")]
SuppressOpt = Annotated[
    list[str] | None, typer.Option("--suppress", help="Rule id of a warning to silence (repeatable).")
]
UsageOpt = Annotated[
    Path | None,
    typer.Option(
        "--usage-file", help="Usage YAML (stored GB, data processed, instances...) for usage-priced lines; see README."
    ),
]
PolicyConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy-config",
        help="Policy pack config (levels, settings): JSON as for pulumi preview --policy-pack-config.",
    ),
]


def _emit(text: str, out: Path | None) -> None:
    """The report on stdout, or into `out`; a path that cannot be written is an input error (exit 2)."""
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
        reason = f"{blocked} is not a directory" if blocked else exc.strerror or type(exc).__name__
        raise InputError.single(
            f"cannot write the report: {reason}", file=out, hint="give --out a file path in a writable directory"
        ) from None


def _finish(report: AnyReport, fmt: Format, out: Path | None) -> NoReturn:
    """Problems on stderr, the report on stdout (or --out), and the report's exit code."""
    for problem in report.problems:
        sys.stderr.write(f"{problem.stack}: cannot be read\n" + "".join(f"  {m}\n" for m in problem.messages))
    _emit(FORMATS[fmt.value](report), out)
    raise typer.Exit(report.exit_code)


@app.command()
def validate(
    stacks: StacksArg,
    org: OrgOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
) -> None:
    """Check stacks and print findings and the plan (memory, racks, power, checkpoints, quotas, replicas)."""
    from gpuinfra.commands.validate import validate_stacks

    report = validate_stacks(stacks, org, suppress or [])
    _finish(report, fmt, out)


@app.command()
def preview(
    stacks: StacksArg,
    org: OrgOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
    usage_file: UsageOpt = None,
    policy_config: PolicyConfigOpt = None,
) -> None:
    """Validate, plan and run each stack's Pulumi program in-process; print the resources it would create, what
    they cost, and the policy pack's verdicts."""
    from gpuinfra.commands.preview import preview_stacks

    report = preview_stacks(stacks, org, suppress or [], usage_file, policy_config)
    _finish(report, fmt, out)


@app.command()
def cost(
    inputs: Annotated[
        list[str],
        typer.Argument(
            help="Stack names or files (previewed first), or JSON documents: gpuinfra preview --format json, "
            "pulumi preview --json, pulumi stack export, a Pulumi engine event log."
        ),
    ],
    org: OrgOpt = None,
    usage_file: UsageOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
) -> None:
    """Price stacks or Pulumi documents from the catalog: a breakdown by resource, component, region and account."""
    from gpuinfra.commands.cost import cost_command

    if suppress is None:
        suppress = []
    report = cost_command(inputs, org, usage_file, suppress)
    _finish(report, fmt, out)


@app.command()
def diff(
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help="BASE.json HEAD.json; or one pulumi preview --json document; or, with --base-ref, stack names "
            "(default: every stack)."
        ),
    ] = None,
    base_ref: Annotated[
        str | None,
        typer.Option(
            "--base-ref",
            help="Git commit, branch or tag: preview its stacks with its own code as the base side, "
            "and the working tree as the head side.",
        ),
    ] = None,
    org: OrgOpt = None,
    usage_file: UsageOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
    policy_config: PolicyConfigOpt = None,
) -> None:
    """Resources added, removed and changed (update or replace), the monthly cost change, and findings that
    appear or go away, judged with --policy-config and --suppress as `preview` judges them. Exit 2 when the head
    cannot be read, 1 when it has an error finding or a mandatory policy violation."""
    from gpuinfra.commands.diff import diff_command

    report = diff_command(list(args or []), base_ref, org, usage_file, suppress or [], policy_config)
    _finish(report, fmt, out)


@app.command()
def catalog(
    instance_type: Annotated[
        str | None, typer.Argument(metavar="[TYPE]", help="Show this instance type: prices by region, quota codes.")
    ] = None,
    accelerator: Annotated[
        str | None, typer.Option("--accelerator", help="Only types with this accelerator (H100, L4, Trainium...).")
    ] = None,
    min_memory_gib: Annotated[
        float, typer.Option("--min-memory-gib", min=0, help="Only types with at least this memory per accelerator.")
    ] = 0,
    efa: Annotated[bool | None, typer.Option("--efa/--no-efa", help="Only types with (or without) EFA.")] = None,
    region: Annotated[str | None, typer.Option("--region", help="Only types with an on-demand price here.")] = None,
    regions: Annotated[bool, typer.Option("--regions", help="List the regions, with types priced in each.")] = False,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
) -> None:
    """What the planner and the pricer read: instance types (hardware, network cards, EFA), regions, and one
    type's on-demand and spot prices by region with their dates, and its quota codes."""
    from gpuinfra.commands.catalog import catalog_command

    report = catalog_command(instance_type, accelerator, min_memory_gib, efa, region, regions)
    _finish(report, fmt, out)


@app.command()
def schema(
    kind: Annotated[SchemaKind, typer.Argument(help="Which file's schema.")] = SchemaKind.stack, out: OutOpt = None
) -> None:
    """Write the JSON Schema of stack files (or the organization file) for editors."""
    from gpuinfra.commands.schema import schema_text

    _emit(schema_text(kind.value), out)


def main() -> None:
    """Console entry point: input errors exit 2 with a message, never a traceback; a failure of gpuinfra's own
    (a bug) exits 3 with one line naming it."""
    try:
        app()
    except InputError as exc:
        sys.stderr.write(exc.render() + "\n")
        sys.exit(2)
    except GpuinfraError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a bug in gpuinfra: say so plainly instead of a traceback
        sys.stderr.write(f"error: gpuinfra failed unexpectedly ({type(exc).__name__}: {exc}); this is a bug\n")
        sys.exit(3)


__all__ = ["app", "main"]
