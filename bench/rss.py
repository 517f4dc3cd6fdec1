"""Peak resident memory of a scenario's stages, in a fresh process: `python -m bench.rss fleet 40 stages`.

Linux resets a process's high-water mark (VmHWM) on `5 > /proc/self/clear_refs`, so each stage's peak is
read on its own: the whole process's resident set at the stage's high point. Modes:
- `preview`: `gpuinfra preview` end to end, alone in the process (the figure the target is about);
- `stages`: validate, engine, cost and policies once each, in pipeline order, each one's baseline being
  what the stages before it left loaded (no stage runs twice, so none reuses memory a rehearsal freed);
- `diff`: `gpuinfra diff` of two previews written by a forked child, so the parent never built them."""

from __future__ import annotations

import gc
import json
import multiprocessing
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gpuinfra.commands.diff import diff_command
from gpuinfra.pulumi.preview import preview_graph
from gpuinfra.report.render.json import render_diff_json
from gpuinfra.workspace.check import check_stack

from bench import stages
from bench.synthetic import grown_fleet, scenario

MODES = ("preview", "stages", "diff")
T = TypeVar("T")


def _status_mb(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


class Peaks(dict[str, tuple[float, float]]):
    """Stage name -> (resident MB before it, peak MB during it)."""

    def step(self, name: str, fn: Callable[[], T]) -> T:
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")
        baseline = _status_mb("VmRSS")
        value = fn()
        self[name] = (baseline, _status_mb("VmHWM"))
        return value


def _documents(path: Path, folder: Path) -> tuple[Path, Path]:
    base, head = folder / "base.json", folder / "head.json"

    def write() -> None:
        stages.preview_document(path, base)
        stages.preview_document(grown_fleet(path), head)

    child = multiprocessing.get_context("fork").Process(target=write)
    child.start()
    child.join()
    if child.exitcode != 0:
        raise RuntimeError(f"writing the diff's previews failed (exit {child.exitcode})")
    return base, head


def measure(kind: str, size: int, mode: str) -> Peaks:
    folder = Path(tempfile.mkdtemp(prefix="gpuinfra-bench-"))
    path = scenario(kind, size, folder)
    peaks = Peaks()
    if mode == "preview":
        peaks.step("preview", stages.preview(path))
    elif mode == "diff":
        base, head = _documents(path, folder)
        peaks.step("diff", lambda: render_diff_json(diff_command([str(base), str(head)], None, None, None)))
    else:
        checked = peaks.step("validate", lambda: check_stack(path))
        graph = peaks.step("engine", lambda: preview_graph(checked.inputs, checked.plan))
        prepared = stages.Prepared(path, checked, graph)
        peaks.step("cost", stages.cost(prepared))
        peaks.step("policies", stages.policies(prepared))
    return peaks


def main() -> None:
    kind, size, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    print(json.dumps(measure(kind, size, mode)))


if __name__ == "__main__":
    main()
