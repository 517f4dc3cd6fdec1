"""`python -m bench.cli_help`: `gpuinfra --help` as a user pays for it, the whole process (interpreter start,
imports, rendering), against the floor any typer + rich CLI pays: `python -c 'import typer, rich'`. Samples
alternate between the two so a busy stretch of a shared machine hits both; exits 1 when the ratio of the
medians is over the target."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HELP_OVER_FLOOR = 2.0
"""Issue 29: `gpuinfra --help` costs at most 2x a bare `python -c 'import typer, rich'` (whole process)."""


def _console_script() -> list[str]:
    """The installed `gpuinfra` beside this interpreter (what a user runs), else the module entry point."""
    script = Path(sys.executable).parent / "gpuinfra"
    if script.is_file():
        return [str(script)]
    found = shutil.which("gpuinfra")
    return [found] if found else [sys.executable, "-c", "from gpuinfra.cli import run; run()"]


def _seconds(command: list[str]) -> float:
    env = {**os.environ, "COLUMNS": "100"}
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - start


def samples(runs: int = 15) -> tuple[list[float], list[float]]:
    """(help, floor) wall seconds, alternating, after one warm-up of each (the OS caches the files)."""
    help_cmd = [*_console_script(), "--help"]
    floor_cmd = [sys.executable, "-c", "import typer, rich"]
    _seconds(help_cmd), _seconds(floor_cmd)
    help_s, floor_s = [], []
    for _ in range(runs):
        help_s.append(_seconds(help_cmd))
        floor_s.append(_seconds(floor_cmd))
    return help_s, floor_s


def ratio(help_s: list[float], floor_s: list[float]) -> float:
    return statistics.median(help_s) / statistics.median(floor_s)


def main(runs: int = 15) -> int:
    help_s, floor_s = samples(runs)
    r = ratio(help_s, floor_s)
    ok = r <= HELP_OVER_FLOOR
    print(
        f"gpuinfra --help: median {statistics.median(help_s) * 1000:.0f} ms; python -c 'import typer, rich': "
        f"{statistics.median(floor_s) * 1000:.0f} ms; ratio {r:.2f} over {runs} runs; target <= "
        f"{HELP_OVER_FLOOR:.0f}x: {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
