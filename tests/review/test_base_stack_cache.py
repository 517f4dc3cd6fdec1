"""`diff --base-ref --cache-dir --jobs` hands the cache and the jobs to the base revision's own `preview` only when
that code keeps per-stack entries (it has gpuinfra/commands/stack_cache.py): older code would refuse the flag. Fake
revisions in a scratch git repository stand in for real ones (they record the flags they were given)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from gpuinfra.review.baseref import base_preview

FAKE_CLI = """
import json, sys
def main():
    args = sys.argv[1:]
    out = args[args.index("--out") + 1]
    json.dump({"version": 1, "command": "preview", "stacks": [], "argv": args}, open(out, "w"))
"""
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def repo(tmp_path: Path, keeps_stacks: bool) -> Path:
    root = tmp_path / "repo"
    (root / "stacks").mkdir(parents=True)
    (root / "stacks" / "Pulumi.x.yaml").write_text("config: {}\n")
    (root / "Pulumi.yaml").write_text((Path(__file__).resolve().parents[2] / "Pulumi.yaml").read_text())
    package = root / "infra" / "gpuinfra"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text(FAKE_CLI)
    (root / "templates").mkdir()
    (root / "templates" / "README").write_text("base templates\n")
    if keeps_stacks:
        (package / "commands").mkdir()
        (package / "commands" / "stack_cache.py").write_text("")
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "base"], cwd=root, check=True)
    return root


@pytest.mark.parametrize("keeps_stacks", [True, False], ids=["code-with-stack-cache", "older-code"])
def test_the_base_gets_the_cache_only_when_its_code_keeps_stacks(tmp_path: Path, keeps_stacks: bool) -> None:
    root = repo(tmp_path, keeps_stacks)
    cache = tmp_path / "cache"
    out = tmp_path / "base.json"
    base_preview("HEAD", ["x"], out, cwd=root, flags=["--suppress", "R1"], cache_dir=cache, jobs=3)
    argv = json.loads(out.read_text())["argv"]
    assert argv[:2] == ["preview", "x"]
    assert ("--cache-dir" in argv) is keeps_stacks
    assert ("--jobs" in argv) is keeps_stacks
    if keeps_stacks:
        assert argv[argv.index("--cache-dir") + 1] == str(cache.resolve())
        assert argv[argv.index("--jobs") + 1] == "3"
    assert argv[-2:] == ["--suppress", "R1"]


def test_no_cache_no_flag(tmp_path: Path) -> None:
    out = tmp_path / "base.json"
    base_preview("HEAD", ["x"], out, cwd=repo(tmp_path, True))
    assert "--cache-dir" not in json.loads(out.read_text())["argv"]
