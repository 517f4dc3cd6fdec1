"""`--jobs`: stacks previewed in worker processes give the same report, byte for byte, and the same exit code as
a serial run, including a stack that cannot be read (a problem, exit 2) among readable ones."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gpuinfra.commands.preview import preview_run
from gpuinfra.report.render.json import render_json
from gpuinfra.report.render.table import render_table


def test_parallel_preview_is_identical_to_serial(tmp_path: Path) -> None:
    broken = tmp_path / "Pulumi.broken.yaml"
    broken.write_text("config:\n  gpuinfra:spec: [not, a, spec\n")
    stacks = ["chat-serve", str(broken), "model-registry"]
    serial = preview_run(stacks, jobs=1)
    parallel = preview_run(stacks, jobs=2)
    assert [s.stack for s in serial.report.stacks] == ["chat-serve", "model-registry"]  # the order given
    assert len(serial.report.problems) == 1 and serial.report.exit_code == 2
    assert render_json(parallel.report) == render_json(serial.report)
    assert render_table(parallel.report) == render_table(serial.report)
    assert parallel.report.exit_code == serial.report.exit_code
    assert parallel.snapshots.keys() == serial.snapshots.keys()
    for name, snapshot in serial.snapshots.items():
        assert parallel.snapshots[name].graph == snapshot.graph


class _Loud:
    """Says so when the interpreter's teardown frees it."""

    def __del__(self, write: Callable[[int, bytes], int] = os.write) -> None:
        write(1, b" torn-down")  # bound early: at teardown, imports may no longer work


_KEPT: list[_Loud] = []


def _said(text: str) -> int:
    """A worker's task: `text` left in its stdout's buffer (a pipe, not a terminal: nothing flushes it yet), and
    an object only the interpreter's teardown would free."""
    import sys

    sys.stdout.write(text)
    _KEPT.append(_Loud())
    return os.getpid()


def test_a_worker_ends_without_teardown_with_its_output_flushed() -> None:
    """Workers leave with `os._exit` once the pool lets them go (`_quick_exit`): the interpreter's teardown (about
    1 s for a worker that ran the engine) never runs, what they wrote is not lost (multiprocessing flushes the
    standard streams before the exit functions run, `_quick_exit` again), and the pool ends."""
    import subprocess
    import sys

    script = (
        "import multiprocessing\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from gpuinfra.commands.preview import _worker\n"
        "from tests.cli.test_jobs import _said\n"
        "if __name__ == '__main__':\n"
        "    context = multiprocessing.get_context('spawn')\n"
        "    with ProcessPoolExecutor(1, mp_context=context, initializer=_worker, initargs=(True,)) as pool:\n"
        "        pool.submit(_said, 'said-in-the-worker').result()\n"
        "    print(' parent-done', multiprocessing.active_children())\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # set on these machines: then no buffer
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "said-in-the-worker" in done.stdout  # flushed before os._exit
    assert "torn-down" not in done.stdout  # no teardown
    assert done.stdout.rstrip().endswith("parent-done []")  # the worker has exited


def test_a_failure_beside_the_workers_stops_them_rather_than_waiting() -> None:
    """`preview_started` with workers running and the caller failing (the base's preview beside them, SIGTERM):
    the workers are terminated, none is left running when the error reaches the caller (a worker left behind
    when the installed script ends with `os._exit` would wait for work forever)."""
    import multiprocessing

    import pytest
    from gpuinfra.commands.preview import preview_started

    class BaseFailed(Exception):
        pass

    with pytest.raises(BaseFailed), preview_started(["llm-train", "chat-serve"], jobs=2):
        assert len(multiprocessing.active_children()) == 2  # two accounts: two groups, two workers started
        raise BaseFailed
    assert multiprocessing.active_children() == []
