"""The `gpuinfra` command. Only wires stages together; every decision lives in the stages."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from .errors import GpuinfraError, InputError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile GPU infrastructure specs into Pulumi stacks; validate, preview, police and price them.",
    pretty_exceptions_enable=False,
)


class Format(str, Enum):
    table = "table"
    markdown = "markdown"
    json = "json"


class SchemaKind(str, Enum):
    stack = "stack"
    org = "org"


StacksArg = Annotated[list[str], typer.Argument(help="Stack names (stacks/Pulumi.<name>.yaml) or stack file paths.")]
OrgOpt = Annotated[Path | None, typer.Option("--org", help="Organization file (default: org.yaml beside the stack).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Write the report to this file instead of stdout.")]
SuppressOpt = Annotated[list[str], typer.Option("--suppress", help="Rule id of a warning to silence (repeatable).")]
PolicyConfigOpt = Annotated[Path | None, typer.Option(
    "--policy-config", help="Policy pack config (levels, settings), JSON as for `pulumi preview --policy-pack-config`.")]


def _emit(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


def _render(report: object, fmt: Format) -> str:
    from .report import render

    return render(report, fmt.value)  # type: ignore[arg-type]


@app.command()
def validate(stacks: StacksArg, org: OrgOpt = None, fmt: FormatOpt = Format.table, out: OutOpt = None,
             suppress: SuppressOpt = []) -> None:  # noqa: B006 - typer reads the default
    """Check stacks and print findings and the plan (memory, racks, power, checkpoints, quotas, replicas)."""
    from .pipeline import validate_stacks

    report = validate_stacks(stacks, org, suppress)
    _emit(_render(report, fmt), out)
    raise typer.Exit(report.exit_code)


@app.command()
def preview(stacks: StacksArg, org: OrgOpt = None, fmt: FormatOpt = Format.table, out: OutOpt = None,
            suppress: SuppressOpt = [], policy_config: PolicyConfigOpt = None) -> None:  # noqa: B006 - typer reads the default
    """Validate, plan and run each stack's Pulumi program in-process, then the policy pack over what it would create."""
    from .pipeline import preview_stacks

    report = preview_stacks(stacks, org, suppress, policy_config)
    _emit(_render(report, fmt), out)
    raise typer.Exit(report.exit_code)


@app.command()
def schema(kind: Annotated[SchemaKind, typer.Argument(help="Which file's schema.")] = SchemaKind.stack,
           out: OutOpt = None) -> None:
    """Write the JSON Schema of stack files (or the organization file) for editors."""
    from .schema import org_schema, stack_schema

    data = stack_schema() if kind is SchemaKind.stack else org_schema()
    _emit(json.dumps(data, indent=2, sort_keys=True) + "\n", out)


def main() -> None:
    """Console entry point: input errors exit 2 with a message, never a traceback."""
    try:
        app()
    except InputError as exc:
        sys.stderr.write(exc.render() + "\n")
        sys.exit(2)
    except GpuinfraError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)


__all__ = ["app", "main"]
