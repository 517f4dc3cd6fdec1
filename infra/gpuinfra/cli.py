"""The `gpuinfra` command. Only wires stages together; every decision lives in the stages."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.report.formats import format_names

if TYPE_CHECKING:  # the renderers load the report model and the stages: imported when a command runs
    from gpuinfra.report.render import AnyReport

app = typer.Typer(
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    rich_markup_mode=None,  # click's plain help: rendering it with rich imports markdown-it, pygments...: 3x slower
    no_args_is_help=True,
    help="Compile GPU infrastructure specs into Pulumi stacks; validate, preview, police and price them.",
    pretty_exceptions_enable=False,
)


from gpuinfra.commands.dataprep import app as dataprep_app  # noqa: E402  (the `dataprep` sub-commands)

app.add_typer(dataprep_app, name="dataprep")


def _show_version(value: bool) -> None:
    if value:
        from gpuinfra import __version__

        sys.stdout.write(f"gpuinfra {__version__}\n")
        raise typer.Exit()


DEBUG_ENV = "GPUINFRA_DEBUG"
"""Set to 1 (or pass --debug): an internal error (exit 3) prints its traceback, for a bug report."""


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", help=f"Print the traceback of an internal error (exit 3); also {DEBUG_ENV}=1."),
    ] = False,
) -> None:
    """Compile GPU infrastructure specs into Pulumi stacks; validate, preview, police and price them."""
    if debug:
        os.environ[DEBUG_ENV] = "1"


Format = StrEnum("Format", {name: name for name in format_names()})  # type: ignore[misc]
"""One per renderer module in infra/gpuinfra/report/render/: a new format needs no edit here."""


class AdviceFormat(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


class SchemaKind(StrEnum):
    stack = "stack"
    org = "org"
    intent = "intent"


StacksArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="STACK",
        autocompletion=lambda incomplete: _stack_names(incomplete),
        help="Stack names (Pulumi.<name>.yaml in the Pulumi project's stackConfigDir) or stack file paths "
        "(default: every stack of the project).",
    ),
]
OrgOpt = Annotated[Path | None, typer.Option("--org", help="Organization file (default: org.yaml beside the stack).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Write the report to this file instead of stdout.")]
SuppressOpt = Annotated[
    list[str] | None,
    typer.Option("--suppress", metavar="RULE", help="Rule id of a warning to silence (repeatable)."),
]
UsageOpt = Annotated[
    Path | None,
    typer.Option(
        "--usage-file", help="Usage YAML (stored GB, data processed, instances...) for usage-priced lines; see README."
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Stacks previewed at once, in worker processes (default: the number of cores). The report and the "
        "exit code are the same as with --jobs 1.",
    ),
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Keep each stack's preview here by content (its files, the same-account and registry stacks it reads, "
        "the code, the dependency versions, the flags) and reuse it while they are unchanged; unsound entries are "
        "ignored. The output is the same as without it. Default: the user's cache directory "
        "($GPUINFRA_CACHE_DIR/previews, else ~/.cache/gpuinfra/previews); GPUINFRA_CACHE=off or --no-cache: none.",
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Keep and reuse no preview (see --cache-dir).")]
PolicyConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy-config",
        help="Policy pack config (levels, settings): JSON as for pulumi preview --policy-pack-config.",
    ),
]


def _stack_names(incomplete: str) -> list[str]:
    """Shell completion of STACK: the project's stack names."""
    from gpuinfra.load import project_dir, stack_names

    project = project_dir()
    return [name for name in stack_names(project) if name.startswith(incomplete)] if project else []


def _cache(given: Path | None, off: bool) -> Path | None:
    """--cache-dir, else the user's review cache unless --no-cache or GPUINFRA_CACHE=off."""
    if given is not None:
        return given
    if off or os.environ.get("GPUINFRA_CACHE", "").lower() in ("off", "0", "no", "false"):
        return None
    from gpuinfra.commands.base_code import user_cache_dir

    return user_cache_dir() / "previews"


def _jobs(given: int | None) -> int:
    """--jobs, else the cores this process may run on."""
    if given is not None:
        return given
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _count(items: list[str], noun: str = "stack") -> str:
    return f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"


@contextmanager
def _working(message: str, after_seconds: float = 1.0, quiet: bool = False, stacks: int = 0) -> Iterator[None]:
    """Progress on stderr once the work has taken a second, for a person at a terminal only (never in pipes, CI
    logs (`CI` set), captured output or for `--format json`): a spinner, with the stacks previewed so far (of
    `stacks`, when known) as the run announces them (gpuinfra.commands.progress). The report still goes to
    stdout."""
    if not sys.stderr.isatty() or os.environ.get("CI") or quiet:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from gpuinfra.commands.progress import listening

    columns = [SpinnerColumn(), TextColumn(f"{message}..."), TextColumn("{task.completed} stacks previewed")]
    if stacks > 1:
        columns[2:] = [BarColumn(), MofNCompleteColumn()]
    bar = Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(message, total=stacks or None)
    timer = threading.Timer(after_seconds, bar.start)
    timer.start()
    try:
        with listening(lambda n: bar.advance(task, n)):
            yield
    finally:
        timer.cancel()
        bar.stop()


def _emit(text: str, out: Path | None, inputs: tuple[Path | str | None, ...] = ()) -> None:
    """The report on stdout, or into `out` (atomically; never a FIFO, a device or one of the run's inputs)."""
    if out is None:
        sys.stdout.write(text)
        return
    from gpuinfra.spec.files import write_output

    write_output(out, text, _input_files(inputs))


def _input_files(given: tuple[Path | str | None, ...]) -> list[Path]:
    """The files a run reads that `--out` must not overwrite: every argument that names a file, each named
    stack's file and the organization file beside it."""
    from gpuinfra.load import ORG_FILE_NAME, stack_path

    found: list[Path] = []
    for item in given:
        if item is None:
            continue
        path = Path(item)
        found.append(path)
        if isinstance(item, str) and not path.exists():
            try:
                path = stack_path(item)
            except (InputError, OSError):  # not a stack name either: nothing more it could overwrite
                continue
            found.append(path)
        found.append(path.parent / ORG_FILE_NAME)
    return found


def _finish(report: AnyReport, fmt: Format, out: Path | None, *inputs: Path | str | None) -> NoReturn:
    """Problems on stderr, the report on stdout (or --out), and the report's exit code."""
    from gpuinfra.report.render import FORMATS
    from gpuinfra.report.render.table import WIDTH

    if fmt.value == "table" and out is None and sys.stdout.isatty():  # a person reads it: their terminal's width
        WIDTH.set(max(80, shutil.get_terminal_size().columns))
    for problem in report.problems:
        sys.stderr.write(f"{problem.stack}: cannot be read\n" + "".join(f"  {m}\n" for m in problem.messages))
    _emit(FORMATS[fmt.value](report), out, inputs)
    raise typer.Exit(report.exit_code)


@app.command()
def validate(
    stacks: StacksArg = None,
    org: OrgOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
) -> None:
    """Check stacks and print findings and the plan (memory, racks, power, checkpoints, quotas, replicas).

    \b
    Examples:
      gpuinfra validate                          every stack of the project
      gpuinfra validate llm-train chat-serve
      gpuinfra validate stacks/Pulumi.llm-train.yaml --format json
    """
    from gpuinfra.commands.stacks import stacks_or_every
    from gpuinfra.commands.validate import validate_stacks

    names = stacks_or_every(stacks)
    with _working(f"validating {_count(names)}", quiet=fmt.value == "json"):
        report = validate_stacks(names, org, suppress or [])
    _finish(report, fmt, out, *names, org)


@app.command()
def preview(
    stacks: StacksArg = None,
    org: OrgOpt = None,
    fmt: FormatOpt = Format["table"],
    out: OutOpt = None,
    suppress: SuppressOpt = None,
    usage_file: UsageOpt = None,
    policy_config: PolicyConfigOpt = None,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Validate, plan and run each stack's Pulumi program in-process; print the resources it would create, what
    they cost, and the policy pack's verdicts.

    \b
    Examples:
      gpuinfra preview                           every stack of the project
      gpuinfra preview llm-train
      gpuinfra preview llm-train --format json --out out/llm-train.json
      gpuinfra preview chat-serve --policy-config policy.json --format markdown
    """
    from gpuinfra.commands.preview import PreviewOptions, preview_stacks
    from gpuinfra.commands.stacks import stacks_or_every

    names = stacks_or_every(stacks)
    with _working(f"previewing {_count(names)}", quiet=fmt.value == "json", stacks=len(names)):
        options = PreviewOptions.of(org, suppress or [], usage_file, policy_config)
        report = preview_stacks(names, options, _jobs(jobs), _cache(cache_dir, no_cache))
    _finish(report, fmt, out, *names, org, usage_file, policy_config)


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
    """Price stacks or Pulumi documents from the catalog: a breakdown by resource, component, region and account.

    \b
    Examples:
      gpuinfra cost llm-train chat-serve
      gpuinfra cost llm-train --usage-file usage.yml --format json
      gpuinfra cost preview.json                 a pulumi preview --json document
    """
    from gpuinfra.commands.cost import cost_command

    if suppress is None:
        suppress = []
    with _working(f"pricing {_count(inputs, 'input')}", quiet=fmt.value == "json"):
        report = cost_command(inputs, org, usage_file, suppress)
    _finish(report, fmt, out, *inputs, org, usage_file)


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
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    jobs: JobsOpt = None,
    base_code: Annotated[
        str,
        typer.Option(
            "--base-code",
            metavar="auto|installed|pinned",
            help="Which gpuinfra previews the --base-ref side: auto (the base revision's own source in gpuinfra's "
            "repository, else this gpuinfra), installed (this gpuinfra), pinned (the version the base revision "
            "pins in requirements.txt, pyproject.toml or a lock file, installed once into the user's cache).",
        ),
    ] = "auto",
) -> None:
    """Resources added, removed and changed (update or replace), the monthly cost change, and findings that
    appear or go away, judged with --policy-config and --suppress as `preview` judges them. Exit 2 when the head
    cannot be read, 1 when it has an error finding or a mandatory policy violation.

    \b
    Examples:
      gpuinfra diff --base-ref main              every stack: main's code and stacks against the working tree
      gpuinfra diff --base-ref origin/main llm-train --format markdown --out review.md
      gpuinfra diff base.json head.json          two gpuinfra preview --format json documents
    """
    from gpuinfra.commands.diff import diff_command

    with _working("comparing" + (f" against {base_ref}" if base_ref else ""), quiet=fmt.value == "json"):
        report = diff_command(
            list(args or []),
            base_ref,
            org,
            usage_file,
            suppress or [],
            policy_config,
            _cache(cache_dir, no_cache),
            _jobs(jobs),
            base_code,
        )
    _finish(report, fmt, out, *(args or []), org, usage_file, policy_config)


@app.command()
def catalog(
    instance_type: Annotated[
        str | None,
        typer.Argument(
            metavar="[TYPE|refresh]",
            help="Show this instance type: prices by region, quota codes. `refresh`: rebuild the price files.",
        ),
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
    from_dir: Annotated[
        Path | None,
        typer.Option("--from", help="refresh: read recorded excerpts laid out like AWS's hosts (default: AWS)."),
    ] = None,
    cloud_name: Annotated[
        str, typer.Option("--cloud", help="refresh: whose catalog (aws, or a cloud of the registry with its own).")
    ] = "aws",
    account: Annotated[
        str | None, typer.Option("--account", help="refresh: the account (project) a cloud's API lists types for.")
    ] = None,
) -> None:
    """What the planner and the pricer read: instance types (hardware, network cards, EFA), regions, and one
    type's on-demand and spot prices by region with their dates, and its quota codes. `gpuinfra catalog refresh
    [--from DIR] [--out DIR]` rebuilds the data files from AWS's public Price List (--out: the directory to write,
    default the bundled catalog's).

    \b
    Examples:
      gpuinfra catalog --accelerator H100
      gpuinfra catalog --min-memory-gib 90 --efa
      gpuinfra catalog p5.48xlarge --format json
    """
    from gpuinfra.commands.catalog import catalog_command, refresh_command

    if instance_type == "refresh":
        sys.stdout.write(refresh_command(from_dir, out, cloud_name, account))
        raise typer.Exit(0)

    report = catalog_command(instance_type, accelerator, min_memory_gib, efa, region, regions)
    _finish(report, fmt, out)


@app.command()
def init(
    workload: Annotated[
        str | None,
        typer.Argument(
            metavar="WORKLOAD",
            help="training (training-pcs), training-eks, training-onprem, inference (inference-ec2), inference-k8s, "
            "finetune, registry or dataprep. Without it: scaffold the repository only.",
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Argument(metavar="NAME", help="The stack's name: stacks/Pulumi.<name>.yaml and the spec's name."),
    ] = None,
    directory: Annotated[
        Path, typer.Option("--dir", help="Where to start: the Pulumi project at or above it, or a new one here.")
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Replace an existing stack file of that name.")] = False,
) -> None:
    """Scaffold a team's gpuinfra repository (project, organization file, policy pack, review workflow,
    requirements.txt, .gitignore, README), or add a stack to it; every value validates with no warning, and
    values marked `yours:` are examples to replace.

    \b
    Examples:
      gpuinfra init                              the repository, in the working directory
      gpuinfra init training my-train            Slurm as an AWS PCS cluster (the repository too, if missing)
      gpuinfra init inference-ec2 chat --dir ~/infra
    """
    from gpuinfra.commands.init import init_repository, init_stack

    if workload is not None and name is None:
        raise InputError.single(f"init {workload}: the stack needs a name", hint=f"gpuinfra init {workload} my-stack")
    result = init_stack(workload, name, directory, force) if workload and name else init_repository(directory)
    for path in result.written:
        sys.stdout.write(f"wrote {os.path.relpath(path)}\n")
    for path in result.kept:
        sys.stdout.write(f"kept  {os.path.relpath(path)} (exists)\n")
    sys.stdout.write("next:\n" + "".join(f"  {step}\n" for step in result.next_steps))


@app.command()
def advise(
    intent: Annotated[
        Path, typer.Argument(metavar="INTENT", help="The intent file (gpuinfra:intent; docs/advise.md).")
    ],
    fmt: Annotated[AdviceFormat, typer.Option("--format", "-f", help="Output format.")] = AdviceFormat.table,
    out: OutOpt = None,
    write_stacks: Annotated[
        bool, typer.Option("--init", help="Write the stacks the answer needs (through init), then preview them.")
    ] = False,
    directory: Annotated[Path, typer.Option("--dir", help="--init: the project at or above it, or a new one.")] = Path(
        "."
    ),
    force: Annotated[bool, typer.Option("--force", help="--init: replace stack files init wrote before.")] = False,
) -> None:
    """Walk the decision ladder over an intent: a managed API, adapting on one GPU, serving only, or training;
    each rung's figures, where it stops and why, and the lifetime bill.

    \b
    Examples:
      gpuinfra advise stacks/intents/chat-service.yaml
      gpuinfra advise stacks/intents/new-70b.yaml --format markdown --out advice.md
      gpuinfra advise stacks/intents/new-70b.yaml --init --dir ~/infra
    """
    from gpuinfra.commands.advise import advise_command, init_advice
    from gpuinfra.report.advice import render

    walked = advise_command(intent)
    _emit(render(walked.advice, fmt.value), out, (intent,))
    if write_stacks:
        result, lacking = init_advice(walked, intent, directory, force)
        for path in result.written:
            sys.stderr.write(f"wrote {os.path.relpath(path)}\n")
        sys.stderr.write("".join(f"the organization file lacks {line}\n" for line in lacking or []))
        sys.stderr.write("next:\n" + "".join(f"  {step}\n" for step in result.next_steps))


@app.command()
def schema(
    kind: Annotated[SchemaKind, typer.Argument(help="Which file's schema.")] = SchemaKind.stack,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the schema to this file.")] = None,
) -> None:
    """Write the JSON Schema of stack files (or the organization file, or intent files) for editors.

    \b
    Examples:
      gpuinfra schema stack --out schemas/stack.schema.json
      gpuinfra schema org --out schemas/org.schema.json
      gpuinfra schema intent --out schemas/intent.schema.json
    """
    from gpuinfra.commands.schema import schema_text

    _emit(schema_text(kind.value), out)


class Terminated(BaseException):
    """SIGTERM, raised where the program is so `finally` blocks and context managers remove what the run made
    (temporary folders, the base side's git worktree, a half-written --out); a BaseException, so no
    `except Exception` on the way swallows it."""


def _terminate(signum: int, frame: object) -> NoReturn:
    raise Terminated(signum)


def main() -> None:
    """Console entry point: input errors exit 2 with a message, never a traceback; a failure of gpuinfra's own
    (a bug) exits 3 with one line naming it; SIGINT and SIGTERM clean up and exit 130 and 143 (128 + signal)."""
    signal.signal(signal.SIGTERM, _terminate)
    _escaping_output()
    try:
        app()
    except InputError as exc:
        sys.stderr.write(exc.render() + "\n")
        sys.exit(2)
    except GpuinfraError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    except OSError as exc:  # a path the user named or the run walked: too long, not a folder, no access, a loop
        sys.stderr.write(f"error: {_os_problem(exc)}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(128 + signal.SIGINT)
    except Terminated:
        sys.exit(128 + signal.SIGTERM)
    except Exception as exc:  # a bug in gpuinfra: say so plainly; the traceback only when asked for
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            import traceback

            traceback.print_exc(file=sys.stderr)
            sys.stderr.write(f"error: gpuinfra {_version()} failed unexpectedly; this is a bug\n")
        else:
            sys.stderr.write(
                f"error: gpuinfra failed unexpectedly ({type(exc).__name__}: {exc}); this is a bug "
                f"(rerun with --debug or {DEBUG_ENV}=1 for the traceback to report)\n"
            )
        sys.exit(3)


def _version() -> str:
    from gpuinfra import __version__

    return __version__


def _escaping_output() -> None:
    """Output never fails to encode: a lone surrogate (an undecodable byte of an argument or a file name, which
    Python keeps as one) or a character the terminal's encoding lacks is written as a backslash escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _os_problem(exc: OSError) -> str:
    """The path and the reason, the path shortened when it is longer than a line (a 5,000-character name)."""
    reason = exc.strerror or type(exc).__name__
    name = exc.filename if exc.filename is not None else exc.filename2
    if name is None:
        return f"{reason}: check the paths given and that their folders can be read"
    from gpuinfra.errors import shortened

    shown = shortened(os.fsdecode(name) if isinstance(name, bytes) else str(name))
    return f"{shown}: {reason}: give a path that exists and can be read (each name at most 255 bytes)"


def run() -> NoReturn:
    """The installed `gpuinfra` script: `main`, then the process ends without the interpreter's teardown.

    A preview leaves some 290,000 objects (the provider SDKs' modules, the engine's graph); freeing them one by one
    at exit took 0.4-0.7 s of every command's wall time on these machines (bench/RESULTS.md, "Whole process"),
    after the work and its output were done. So once `main` returns, the exit handlers run (the same ones a normal
    exit runs) and the standard streams are flushed, then `os._exit` ends the process: files the command wrote
    were already closed by then (reports and cache entries are written whole and renamed into place). Tests call
    `main`, whose `SystemExit` they catch; only the installed script ends here (and only it turns the cyclic
    garbage collector off: gpuinfra.commands.heap)."""
    from gpuinfra.commands.heap import one_shot

    one_shot()
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    atexit._run_exitfuncs()
    os._exit(_flushed(_exit_status(code)))


def _exit_status(code: object) -> int:
    """What `sys.exit(code)` makes the process's status: None is 0, an int itself, anything else is printed
    to stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _flushed(status: int) -> int:
    """Flush stdout and stderr; a reader that went away (a closed pipe) makes the status 120, as Python's own
    exit does when it cannot flush stdout."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    return status


__all__ = ["app", "main", "run"]
