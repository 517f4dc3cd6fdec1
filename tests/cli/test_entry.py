"""The installed `gpuinfra` script (`gpuinfra.cli:run`) ends its process without the interpreter's teardown and
with the cyclic garbage collector off (bench/RESULTS.md, "Whole process"); what it prints, writes and exits
with must be what `gpuinfra.cli:main` gives, which every other test drives."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tomllib
import weakref
from pathlib import Path

import pytest
from gpuinfra.commands.heap import between_stacks, one_shot
from helpers import ROOT


def _entry(name: str, *args: str, cwd: Path = ROOT, **kwargs: object) -> subprocess.CompletedProcess[str]:
    code = f"from gpuinfra.cli import {name}; {name}()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]


def test_the_installed_script_is_run() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["gpuinfra"] == "gpuinfra.cli:run"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["preview", "llm-train", "chat-serve", "--format", "json", "--out", "{out}"], id="preview-two"),
        pytest.param(["validate", "llm-train"], id="validate"),
        pytest.param(["validate", "no-such-stack"], id="unreadable-2"),
        pytest.param(["diff", "{out}"], id="diff-missing-head-2"),
        pytest.param(["--version"], id="version"),
    ],
)
def test_run_prints_writes_and_exits_as_main_does(tmp_path: Path, args: list[str]) -> None:
    results = {}
    for name in ("main", "run"):
        out = tmp_path / f"{name}.json"
        done = _entry(name, *(a.replace("{out}", str(out)) for a in args), capture_output=True)
        written = out.read_bytes() if out.exists() else None
        results[name] = (done.returncode, done.stdout.replace(str(out), "OUT"), done.stderr.replace(str(out), "OUT"))
        results[name + " file"] = written  # type: ignore[assignment]
    assert results["run"] == results["main"]
    assert results["run file"] == results["main file"]
    if args[0] == "preview":
        assert results["run file"] and results["run file"].rstrip().endswith(b"}"), "the report is whole"


def test_a_stdout_nobody_reads_gives_the_same_status(tmp_path: Path) -> None:
    """A reader that went away (`gpuinfra preview ... | head`): writes fail with EPIPE; same status either way."""
    statuses = {}
    for name in ("main", "run"):
        read, write = os.pipe()
        os.close(read)
        try:
            done = _entry(name, "preview", "llm-train", "--format", "json", stdout=write, stderr=subprocess.PIPE)
        finally:
            os.close(write)
        statuses[name] = done.returncode
        assert "Traceback" not in done.stderr
    assert statuses["run"] == statuses["main"] != 0


def test_an_exit_handler_runs_before_the_process_ends(tmp_path: Path) -> None:
    """`run` ends with os._exit, which skips atexit on its own: the handlers (temporary folders, a review's
    worktree) must still run."""
    marker = tmp_path / "ran"
    code = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
        "sys.argv[1:] = ['--version']\n"
        "from gpuinfra.cli import run; run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes"


@pytest.fixture
def collector():
    """Restore the interpreter's collector after a test that turns it off."""
    yield
    gc.unfreeze()
    gc.enable()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_between_stacks_collects_the_last_stacks_cycles_then_freezes_the_rest(collector: None) -> None:
    one_shot()
    assert not gc.isenabled()
    frozen = gc.get_freeze_count()
    kept = [_Cycle()]
    dropped = _Cycle()
    alive = weakref.ref(dropped)
    del dropped
    assert alive() is not None, "with the collector off, a cycle outlives its last name"
    between_stacks()
    assert alive() is None, "the pass freed the cycle"
    assert gc.get_freeze_count() > frozen, "the survivors are frozen"
    assert kept[0].me is kept[0]


def test_between_stacks_leaves_a_running_collector_alone(collector: None) -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    between_stacks()
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()
