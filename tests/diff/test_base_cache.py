"""`diff --base-ref --cache-dir`: the base side's preview reused by content, never changing a result. A scratch
repository whose base code is a fake CLI (it counts its runs and writes a fixed document), so each test runs in
about a second."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gpuinfra.review.baseref import base_preview

FAKE_CLI = """
import json, os, sys
def main():
    args = sys.argv[1:]
    out = args[args.index("--out") + 1]
    with open(os.environ["BASE_RUNS"], "a") as runs:
        runs.write("run\\n")
    stacks = [a for a in args[1:args.index("--format")]]
    json.dump({"version": 1, "command": "preview", "stacks": stacks, "flags": args[args.index("--out") + 2:]},
              open(out, "w"), sort_keys=True)
"""
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "stacks").mkdir(parents=True)
    (root / "stacks" / "Pulumi.x.yaml").write_text("config: {}\n")
    (root / "Pulumi.yaml").write_text((Path(__file__).resolve().parents[2] / "Pulumi.yaml").read_text())
    (root / "infra" / "gpuinfra").mkdir(parents=True)
    (root / "infra" / "gpuinfra" / "__init__.py").write_text("")
    (root / "infra" / "gpuinfra" / "cli.py").write_text(FAKE_CLI)
    (root / "templates").mkdir()
    (root / "templates" / "README").write_text("base templates\n")
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    commit(root, "base")
    monkeypatch.setenv("BASE_RUNS", str(tmp_path / "runs"))
    return root


def commit(root: Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=root, check=True)


def runs(repo: Path) -> int:
    path = repo.parent / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def review(repo: Path, cache: Path | None, flags: list[str] | None = None) -> tuple[bytes, str, list[str]]:
    out = repo.parent / "base.json"
    out.unlink(missing_ok=True)
    label, notes = base_preview("HEAD", ["x", "gone"], out, cwd=repo, flags=flags, cache_dir=cache)
    return out.read_bytes(), label, notes


def test_a_cached_base_is_byte_identical_and_not_previewed_again(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = review(repo, None)
    assert runs(repo) == 1
    first = review(repo, cache)  # a miss: previewed and stored
    assert runs(repo) == 2
    again = review(repo, cache)  # a hit: not previewed
    assert runs(repo) == 2
    assert plain == first == again
    assert again[2] == ["stack gone does not exist at HEAD: all its resources are new"]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda text: text.replace(b'\\"x\\"', b'\\"y\\"'),  # the document edited, seal kept
        lambda text: text[:-5],  # truncated
        lambda text: b"0" * 64 + text[64:],  # seal replaced
    ],
    ids=["edited", "truncated", "reseal"],
)
def test_a_tampered_entry_is_ignored_and_the_result_unchanged(repo: Path, tmp_path: Path, tamper) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache"
    first = review(repo, cache)
    (entry,) = cache.glob("*.json")
    damaged = tamper(entry.read_bytes())
    assert damaged != entry.read_bytes()
    entry.write_bytes(damaged)
    assert review(repo, cache) == first
    assert runs(repo) == 2  # previewed again, not trusted


def test_a_foreign_entry_under_the_key_is_ignored(repo: Path, tmp_path: Path) -> None:
    """A whole, sound entry of another key copied over this key's file: its seal covers its own key."""
    cache = tmp_path / "cache"
    other = review(repo, cache, ["--suppress", "R1"])
    mine = review(repo, None)
    assert other != mine
    (entry,) = cache.glob("*.json")
    review(repo, cache)  # stores this key's entry
    (mine_entry,) = [p for p in cache.glob("*.json") if p != entry]
    mine_entry.write_bytes(entry.read_bytes())
    assert review(repo, cache) == mine


def test_a_change_to_the_base_or_the_flags_misses(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    review(repo, cache)
    review(repo, cache, ["--suppress", "R1"])
    assert runs(repo) == 2
    (repo / "infra" / "gpuinfra" / "cli.py").write_text(FAKE_CLI + "\n# a code change\n")
    commit(repo, "code")
    review(repo, cache)
    assert runs(repo) == 3
