"""`--base-ref` cannot lie: the base is previewed by the base revision's own code (or refused), and a SIGTERM
cleans up the worktree, the temporary folders and the base's process. Fake revisions in a scratch git repository
stand in for real ones, so each test runs in seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.review.baseref import base_preview

FAKE_CLI = """
import json, os, sys, time
def main():
    args = sys.argv[1:]
    out = args[args.index("--out") + 1]
    if os.environ.get("SLOW_BASE"):
        open(os.environ["SLOW_BASE"], "w").write(str(os.getpid()))
        time.sleep(120)
    json.dump({"version": 1, "command": "preview", "stacks": [], "made_by": __file__}, open(out, "w"))
"""


def repo(tmp_path: Path, with_code: bool) -> Path:
    root = tmp_path / "repo"
    (root / "stacks").mkdir(parents=True)
    (root / "stacks" / "Pulumi.x.yaml").write_text("config: {}\n")
    (root / "Pulumi.yaml").write_text((Path(__file__).resolve().parents[2] / "Pulumi.yaml").read_text())
    if with_code:
        (root / "infra" / "gpuinfra").mkdir(parents=True)
        (root / "infra" / "gpuinfra" / "__init__.py").write_text("")
        (root / "infra" / "gpuinfra" / "cli.py").write_text(FAKE_CLI)
        (root / "templates").mkdir()
        (root / "templates" / "README").write_text("base templates\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    return root


def worktrees(root: Path) -> int:
    listed = subprocess.run(["git", "worktree", "list"], cwd=root, capture_output=True, text=True, check=True)
    return len(listed.stdout.strip().splitlines())


def test_the_base_is_previewed_by_its_own_code(tmp_path: Path) -> None:
    root = repo(tmp_path, with_code=True)
    out = tmp_path / "base.json"
    label, notes = base_preview("HEAD", [], out, cwd=root)
    made_by = Path(json.loads(out.read_text())["made_by"])
    assert made_by.name == "cli.py" and "gpuinfra-base-" in str(made_by)  # the base's worktree, not this code
    assert label.startswith("HEAD (") and notes == []
    assert worktrees(root) == 1


def test_a_base_without_the_projects_code_is_refused(tmp_path: Path) -> None:
    root = repo(tmp_path, with_code=False)
    with pytest.raises(InputError, match="has no gpuinfra code"):
        base_preview("HEAD", [], tmp_path / "base.json", cwd=root)
    assert worktrees(root) == 1


def test_sigterm_removes_the_worktree_the_folders_and_the_base_process(tmp_path: Path) -> None:
    root = repo(tmp_path, with_code=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    pid_file = tmp_path / "base.pid"
    code = (
        "import sys; from pathlib import Path; from gpuinfra.review.baseref import base_preview; "
        f"base_preview('HEAD', [], Path({str(tmp_path / 'out.json')!r}), cwd=Path({str(root)!r}))"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "SLOW_BASE": str(pid_file)}
    review = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and review.poll() is None, review.stderr.read() if review.stderr else ""
        time.sleep(0.1)
    base_pid = int(pid_file.read_text())
    assert worktrees(root) == 2 and list(scratch.iterdir())
    review.send_signal(signal.SIGTERM)
    assert review.wait(timeout=60) == 128 + signal.SIGTERM
    assert worktrees(root) == 1
    assert list(scratch.iterdir()) == []
    with pytest.raises(ProcessLookupError):
        os.kill(base_pid, 0)
