"""`python -m bench.process [STACK...] [--write]`: what a user waits for, whole processes (interpreter start, imports,
first runs), against a whole-process floor: a bare Pulumi program registering the same graph under the same
mocks (bench/floor.py run as its own process, `python -m bench.process floor GRAPH.pickle`, imports included).

Rows: one small stack, the Google example, the examples together, and the 40-region fleet (`fleet_rows`: its
synthetic regions registered by `python -m bench.process regions 40 ...` before the installed script's entry runs).
Issue 31: whole-process `preview` of one stack at most 1.5x the floor for the same graph; the examples
together at most 1.5x the sum of their floors. Samples alternate (command, floor, command, ...) so a busy
stretch of the shared machine hits both.

`python -m bench.process repo [--write]`: a 200-stack repository reviewed with `diff --base-ref` (bench/repo.py).
`--write` refreshes only that section of bench/RESULTS.md (the rest is from the last full `make bench`).
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.cli_help import _console_script

PROCESS_OVER_FLOOR = 1.5
"""Issue 31: whole-process preview at most 1.5x the whole-process floor."""
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "stacks"


def _seconds(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process; CPU (user + system, from the kernel's accounting of the
    children) is what a shared machine's load disturbs least."""
    env = {**os.environ, "COLUMNS": "100", "GPUINFRA_CACHE": "off"}  # each run previews: no default review cache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: a finding or policy verdict, still a full run
        raise SystemExit(f"bench: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def save_graphs(stacks: list[str], folder: Path) -> Path:
    """The graphs gpuinfra's programs register for `stacks`, pickled for the floor process (made here, untimed)."""
    from gpuinfra.load import stack_path
    from gpuinfra.pulumi.preview import preview_graph
    from gpuinfra.workspace.check import check_stack

    graphs = []
    for name in stacks:
        checked = check_stack(stack_path(name) if not name.endswith(".yaml") else Path(name))
        if not checked.blocked:
            graphs.append(preview_graph(checked.inputs, checked.plan))
    out = folder / f"graphs-{len(stacks)}.pickle"
    out.write_bytes(pickle.dumps(graphs))
    return out


def compiled() -> None:
    """The package's bytecode, as installing the wheel leaves it (pip compiles at install). An editable install
    writes it at first import, unless PYTHONDONTWRITEBYTECODE is set, as on these machines: then every `gpuinfra`
    process compiled its ~200 modules from source again (~0.3 s), a cost no installed user pays. The floor's
    libraries (pulumi, the provider SDKs) are installed wheels, already compiled."""
    import compileall

    compileall.compile_dir(ROOT / "infra" / "gpuinfra", quiet=1)


def floor_command(graphs: Path) -> list[str]:
    return [sys.executable, "-m", "bench.process", "floor", str(graphs)]


@dataclass(frozen=True)
class Figure:
    label: str
    command_s: float
    floor_s: float
    command_cpu: float
    floor_cpu: float

    @property
    def ratio(self) -> float:
        """The verdict: wall time, what a user waits for."""
        return self.command_s / self.floor_s

    @property
    def cpu_ratio(self) -> float:
        return self.command_cpu / self.floor_cpu

    @property
    def met(self) -> bool:
        return self.ratio <= PROCESS_OVER_FLOOR


def measure(label: str, command: list[str], floor: list[str], runs: int, cwd: Path = ROOT) -> Figure:
    """Medians of `command` and `floor`, alternating, after one warm-up each (the OS caches the files)."""
    _seconds(command, cwd), _seconds(floor, cwd)
    mine, base = [], []
    for _ in range(runs):
        mine.append(_seconds(command, cwd))
        base.append(_seconds(floor, cwd))
    median = statistics.median
    return Figure(
        label,
        median(w for w, _ in mine),
        median(w for w, _ in base),
        median(c for _, c in mine),
        median(c for _, c in base),
    )


def rows(stacks: list[str], runs: int, folder: Path, cli: list[str] | None = None, label: str = "") -> list[Figure]:
    """validate, preview and diff (two previews of the same stacks) as whole processes, each beside the floor."""
    floor = floor_command(save_graphs(stacks, folder))
    cli = cli or _console_script()
    label = label or (" ".join(stacks) if len(stacks) == 1 else f"{len(stacks)} examples")
    previewed = folder / f"preview-{len(stacks)}-{label.replace(' ', '-')}.json"
    subprocess.run([*cli, "preview", *stacks, "--format", "json", "--out", str(previewed)], cwd=ROOT)
    return [
        measure(f"validate {label}", [*cli, "validate", *stacks], floor, runs),
        measure(f"preview {label}", [*cli, "preview", *stacks, "--format", "json"], floor, runs),
        measure(f"diff (two documents) {label}", [*cli, "diff", str(previewed), str(previewed)], floor, runs),
    ]


FLEET_REGIONS = 40


def fleet_rows(runs: int, folder: Path) -> list[Figure]:
    """The 40-region fleet, whole process. Its regions past the catalog's real ones exist only in a process that
    registers them (bench/synthetic.py), so the command is `python -m bench.process regions 40 <gpuinfra args>`:
    the registration, then the installed script's own entry (`gpuinfra.cli:run`). The shim's imports and the
    catalog's early load are counted against the command, never the floor."""
    from bench.synthetic import regions, scenario

    regions(FLEET_REGIONS)  # the floor's graph is made in this process, against the same catalog
    stack = scenario("fleet", FLEET_REGIONS, folder)
    cli = [sys.executable, "-m", "bench.process", "regions", str(FLEET_REGIONS)]
    return rows([str(stack)], runs, folder, cli, f"fleet {FLEET_REGIONS} regions")


def run_with_regions(count: int, argv: list[str]) -> None:
    """`python -m bench.process regions N ARGS`: `gpuinfra ARGS` with the synthetic regions registered."""
    from bench.synthetic import regions

    regions(count)
    sys.argv = ["gpuinfra", *argv]
    from gpuinfra.cli import run

    run()


def run_floor_process(graphs_file: Path) -> None:
    """The timed floor process: imports (pulumi, the provider SDKs the graph uses) and each graph's replay."""
    from bench.floor import run_floor

    for graph in pickle.loads(graphs_file.read_bytes()):
        run_floor(graph)


def _examples() -> list[str]:
    from gpuinfra.load import stack_names

    return stack_names(ROOT)


GROUPS: tuple[Callable[[], list[str]], ...] = (lambda: ["llm-train"], lambda: ["chat-serve-gcp"], _examples)
"""One small stack, the Google example (its provider SDK imported by the command and the floor alike), then the
examples together (then the 40-region fleet: `fleet_rows`)."""


def table(figures: list[Figure]) -> str:
    lines = [
        "| command (whole process) | wall s | floor wall s | wall ratio | CPU s | floor CPU s | CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| `{f.label}` | {f.command_s:.2f} | {f.floor_s:.2f} | {f.ratio:.2f} | {f.command_cpu:.2f} |"
        f" {f.floor_cpu:.2f} | {f.cpu_ratio:.2f} |"
        for f in figures
    ]
    return "\n".join(lines) + "\n"


WHOLE_PROCESS = "Whole process"
REPOSITORY = "Repository at scale"


def whole_process_section(figures: list[Figure]) -> str:
    """The body of RESULTS.md's whole-process section (shared with `make bench`)."""
    return (
        "What a user waits for: each command as its own process (interpreter start, imports, first runs), beside"
        " the whole-process floor, the bare Pulumi program above run as its own process (`python -m bench.process"
        " floor`, imports included) over the same graphs. Wall and CPU seconds, medians; the target is on wall:"
        f" `preview` at most {PROCESS_OVER_FLOOR}x (issue 31). `diff` reads two preview documents.\n\n"
        + table(figures).rstrip()
    )


def refresh(results: Path, title: str, body: str, command: str) -> None:
    """Replace (or add, before the verdict) one `## title` section of RESULTS.md, marked as refreshed alone: the
    rest of the file, and its verdict, are from the last full `make bench`."""
    import datetime

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    note = f"*Refreshed alone by `{command}` on {stamp}; the verdict below is from the last full `make bench`.*"
    section = f"## {title}\n\n{body.rstrip()}\n\n{note}\n"
    text = results.read_text() if results.exists() else "# gpuinfra benchmarks\n"
    head, found, rest = text.partition(f"\n## {title}\n")
    if found:
        after = rest.find("\n## ")
        text = head + "\n" + section + (rest[after:] if after >= 0 else "")
    else:
        at = text.find("\n## Verdict\n")
        text = text + "\n" + section if at < 0 else text[:at] + "\n" + section + text[at:]
    results.write_text(text)


def repo_main(argv: list[str]) -> int:
    """`python -m bench.process repo`: the 200-stack repository's review rows (bench/repo.py)."""
    from bench import repo

    parser = argparse.ArgumentParser(prog="python -m bench.process repo", description=repo.__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed reviews (and single previews), alternating")
    parser.add_argument("--stacks", type=int, default=repo.STACKS)
    parser.add_argument("--write", action="store_true", help=f"refresh the '{REPOSITORY}' section of RESULTS.md")
    args = parser.parse_args(argv)
    compiled()
    with tempfile.TemporaryDirectory(prefix="gpuinfra-bench-repo-") as tmp:
        figures = repo.measure(args.runs, Path(tmp), args.stacks)
    sys.stdout.write(figures.markdown() + "\n")
    if args.write:
        refresh(ROOT / "bench" / "RESULTS.md", REPOSITORY, figures.markdown(), "python -m bench.process repo --write")
    return 1 if figures.misses() else 0


def main() -> int:
    if sys.argv[1:2] == ["floor"]:
        run_floor_process(Path(sys.argv[2]))
        return 0
    if sys.argv[1:2] == ["repo"]:
        return repo_main(sys.argv[2:])
    if sys.argv[1:2] == ["regions"]:
        run_with_regions(int(sys.argv[2]), sys.argv[3:])
    parser = argparse.ArgumentParser(prog="python -m bench.process", description=__doc__.split("\n\n")[0])
    parser.add_argument("stacks", nargs="*", help="stack names (default: one small stack, then every example)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"refresh the '{WHOLE_PROCESS}' section of RESULTS.md")
    args = parser.parse_args()
    groups = [args.stacks] if args.stacks else [list(group()) for group in GROUPS]
    compiled()
    with tempfile.TemporaryDirectory(prefix="gpuinfra-bench-process-") as tmp:
        figures = [f for group in groups for f in rows(group, args.runs, Path(tmp))]
        if not args.stacks:
            figures += fleet_rows(args.runs, Path(tmp))
    sys.stdout.write(table(figures))
    if args.write:
        command = "python -m bench.process " + " ".join([*args.stacks, "--write"])
        refresh(ROOT / "bench" / "RESULTS.md", WHOLE_PROCESS, whole_process_section(figures), command)
    previews = [f for f in figures if f.label.startswith("preview ")]
    return 0 if all(f.met for f in previews) else 1


if __name__ == "__main__":
    sys.exit(main())
