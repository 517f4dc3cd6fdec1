"""`diff --base-ref` previews the base in this process when the base revision's code is the running code byte for
byte (`same_code`, by git blob ids): the review is the same, byte for byte, as the one the base's own code makes
in a subprocess, and the subprocess is still what runs when the code differs (the comparison is what keeps the
review honest: a change to a component shows up as a change)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.commands import diff as diff_module
from gpuinfra.commands.diff import diff_command
from gpuinfra.report.render import render
from gpuinfra.review import baseref
from helpers import committed_project

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
REVIEWED = ["chat-serve", "model-registry"]
"""chat-serve reads the registry's graph (its weight-read flows) and its account's other stacks."""


def commit(root: Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=root, check=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples and a copy of the running package's files (as bench/repo.py makes its repository), one
    commit; then chat-serve's first region's maximum changed in the working tree."""
    root = committed_project(tmp_path_factory.mktemp("base-in-process") / "repo")
    serve = root / "stacks" / "Pulumi.chat-serve.yaml"
    text = serve.read_text()
    assert "max_replicas: 18" in text
    # Above failover n_plus_one's 26 (a cap below it changes nothing), within the account's quota grant.
    serve.write_text(text.replace("max_replicas: 18", "max_replicas: 27", 1))
    return root


def reviewed(cache: Path | None = None) -> tuple[str, str]:
    report = diff_command(REVIEWED, "HEAD", None, None, cache_dir=cache, jobs=1)
    return render(report, "json"), render(report, "markdown")


def head_sha(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()


def test_the_same_code_is_told_by_blob_ids_and_a_one_byte_change_is_not(repo: Path, tmp_path: Path) -> None:
    assert baseref.same_code(repo, head_sha(repo))
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    init = other / "infra" / "gpuinfra" / "__init__.py"
    init.write_text(init.read_text() + "\n")
    commit(other, "a code change")
    assert not baseref.same_code(other, head_sha(other))
    templates = tmp_path / "templates-changed"
    shutil.copytree(repo, templates)
    first = next(p for p in sorted((templates / "templates").rglob("*")) if p.is_file())
    first.write_bytes(first.read_bytes() + b" ")
    commit(templates, "a template change")
    assert not baseref.same_code(templates, head_sha(templates))


def test_in_process_base_is_byte_identical_to_the_subprocess(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    with monkeypatch.context() as patch:
        patch.setattr(baseref, "same_code", lambda root, sha: False)
        by_subprocess = reviewed()
    assert "~ Auto Scaling group: chat-serve-us-east-1-replicas" in by_subprocess[1]  # a real change is reviewed

    def no_subprocess(*args: object, **kwargs: object) -> None:
        raise AssertionError("the base ran in a subprocess although its code is this code")

    monkeypatch.setattr(baseref, "base_preview_started", no_subprocess)
    assert reviewed() == by_subprocess
    cache = tmp_path / "cache"
    assert reviewed(cache) == by_subprocess  # cold: both sides previewed and stored
    assert reviewed(cache) == by_subprocess  # warm: both sides read back
    assert (
        subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout.count("\n") == 1
    )  # the base's checkout removed


def test_the_subprocess_runs_when_the_code_differs(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    subprocess.run(["git", "stash", "-q"], cwd=other, check=True)
    init = other / "infra" / "gpuinfra" / "__init__.py"
    init.write_text(init.read_text() + "# the base's code differs\n")
    commit(other, "a code change")
    monkeypatch.chdir(other)
    called: list[list[str]] = []

    def recorded(ref: str, stacks: list[str], out: Path, **kwargs: object) -> tuple[str, list[str]]:
        called.append(stacks)
        raise SystemExit(3)

    def no_in_process(*args: object) -> None:
        raise AssertionError("the base was previewed by this code although its own code differs")

    monkeypatch.setattr(baseref, "base_preview_started", recorded)
    monkeypatch.setattr(diff_module, "_same_code_sides", no_in_process)
    with pytest.raises(SystemExit):
        reviewed()
    assert called == [REVIEWED]


def test_with_several_jobs_the_base_runs_beside_the_head_and_the_review_is_the_same(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code changed, `--jobs 2`: the base's subprocess (one job) is already running when the head's preview
    (one job) starts, and the review is `--jobs 1`'s byte for byte."""
    from gpuinfra.commands import preview as preview_module

    other = tmp_path / "other"
    shutil.copytree(repo, other)
    subprocess.run(["git", "stash", "-q"], cwd=other, check=True)
    init = other / "infra" / "gpuinfra" / "__init__.py"
    text = init.read_text()
    init.write_text(text + "# the base's code differs\n")
    commit(other, "a code change")
    init.write_text(text)  # the working tree runs this code; HEAD's differs by a comment
    subprocess.run(["git", "stash", "pop", "-q"], cwd=other, check=True)
    monkeypatch.chdir(other)

    def review(jobs: int) -> tuple[str, str]:
        report = diff_command(REVIEWED, "HEAD", None, None, jobs=jobs)
        return render(report, "json"), render(report, "markdown")

    serial = review(1)
    assert "~ Auto Scaling group: chat-serve-us-east-1-replicas" in serial[1]
    seen: list[tuple[int, bool]] = []
    real = preview_module.preview_run

    def head(*args: object, **kwargs: object) -> object:
        mine = ["pgrep", "-P", str(os.getpid()), "-f", "gpuinfra-base-"]  # this process's child, in the worktree
        children = subprocess.run(mine, capture_output=True, text=True).stdout.split()
        seen.append((args[2], bool(children)))  # type: ignore[arg-type]  # (stacks, options, jobs, ...)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(preview_module, "preview_run", head)
    assert review(2) == serial
    assert seen == [(1, True)], "the head previewed with one job while the base's own preview ran"


SERVING = ["chat-serve", "chat-serve-k8s", "model-registry"]
"""chat-serve changed: chat-serve-k8s (its account's other stack) is keyed again with it, the registry is not."""


def test_with_the_same_code_the_head_s_new_stacks_preview_while_the_base_is_read(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same code, `--jobs 2`: the head's stacks that neither the cache nor the base will hold are already in
    worker processes when the base's preview starts, the base's stacks are never started twice (cold, the
    registry is left to the base), and the review is `--jobs 1`'s without a cache, byte for byte."""
    from gpuinfra.commands import preview as preview_module

    monkeypatch.chdir(repo)

    def review(jobs: int, cache: Path | None) -> tuple[str, str]:
        report = diff_command(SERVING, "HEAD", None, None, cache_dir=cache, jobs=jobs)
        return render(report, "json"), render(report, "markdown")

    serial = review(1, None)
    assert "~ Auto Scaling group: chat-serve-us-east-1-replicas" in serial[1]
    events: list[tuple[str, frozenset[str]]] = []
    workers, run = preview_module._in_workers, preview_module.preview_run

    def started(groups: list[list[str]], *args: object) -> object:
        events.append(("workers", frozenset(s for g in groups for s in g)))
        return workers(groups, *args)  # type: ignore[arg-type]

    def base(stacks: list[str], *args: object, **kwargs: object) -> object:
        events.append(("base", frozenset(stacks)))
        return run(stacks, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(preview_module, "_in_workers", started)
    monkeypatch.setattr(preview_module, "preview_run", base)
    changed = frozenset(SERVING[:2])
    cold = tmp_path / "cold"
    assert review(2, cold) == serial
    assert events == [("workers", changed), ("base", frozenset(SERVING)), ("workers", frozenset(SERVING))]

    warm = tmp_path / "warm"  # what CI's cache step restores: every stack previewed at the base
    subprocess.run(["git", "stash", "-q"], cwd=repo, check=True)
    try:
        run(SERVING, cache_dir=warm)
    finally:
        subprocess.run(["git", "stash", "pop", "-q"], cwd=repo, check=True)
    events.clear()
    assert review(2, warm) == serial
    assert events == [("workers", changed), ("base", frozenset(SERVING))]
