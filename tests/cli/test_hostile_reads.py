"""Issue 32: every file the user names is read bounded (policy configuration and the JSON documents of `diff`
and `cost`, like stack files before them), `--out` writes only a new or regular non-input file, atomically,
and SIGINT/SIGTERM remove what the run made. Each hostile example: exit 2 (or 130/143) and the message."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bad_inputs import run_cli
from helpers import ROOT, STACKS

TRAIN = str(STACKS / "Pulumi.llm-train.yaml")


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return lambda *args: run_cli(capsys, monkeypatch, *args)


def refused(result: tuple[int, str, str], *words: str) -> str:
    code, out, err = result
    assert code == 2, out + err
    assert "Traceback" not in err and "unexpectedly" not in err, err
    assert "hint: " in err, err
    for word in words:
        assert word in err, err
    return err


# ---- the policy configuration -------------------------------------------------------------------------
def test_a_fifo_policy_config_is_refused_without_blocking(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    refused(cli("preview", TRAIN, "--policy-config", str(fifo)), "config.json", "not a regular file")


def test_dev_zero_as_policy_config_is_refused_not_read(cli) -> None:  # type: ignore[no-untyped-def]
    refused(cli("preview", TRAIN, "--policy-config", "/dev/zero"), "/dev/zero", "not a regular file")


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("deep", b"[" * 100_000, ("nested deeper than 200 levels",)),
        ("latin1", b'{"all": "advisory", "x": "\xe9"}', ("not UTF-8 text (byte 26)",)),
        ("long-integer", b'{"all": ' + b"9" * 5000 + b"}", ("5,000 digits",)),
        ("nan", b'{"budget-within-limit": {"share": NaN}}', ("NaN is not a JSON number",)),
        ("infinite", b'{"budget-within-limit": {"share": 1e400}}', ("1e400 is beyond a double",)),
        ("oversized", b" " * (1024 * 1024 + 1), ("over the 1,048,576-byte limit",)),
    ],
)
def test_a_hostile_policy_config_is_one_exit_2(
    name: str, content: bytes, words: tuple[str, ...], tmp_path: Path, cli
) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / f"{name}.json"
    config.write_bytes(content)
    refused(cli("preview", TRAIN, "--policy-config", str(config)), f"{name}.json", *words)


# ---- documents given to diff and cost -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"steps": [], "changeSummary": {"create": 1e400}}', ("1e400 is beyond a double",)),
        ('{"steps": [], "changeSummary": {"create": NaN}}', ("NaN is not a JSON number",)),
        ('{"steps": [], "x": "\\ud800"}', ("lone UTF-16 surrogate",)),
    ],
    ids=["overflow", "nan", "lone-surrogate"],
)
@pytest.mark.parametrize("command", ["diff", "cost"])
def test_a_hostile_document_is_one_exit_2(command: str, text: str, words: tuple[str, ...], tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    document = tmp_path / "preview.json"
    document.write_text(text)
    args = [str(document)] * (2 if command == "diff" else 1)
    code, out, err = cli(command, *args, "--format", "json")
    assert code == 2, out + err
    assert "Traceback" not in err and "unexpectedly" not in err, err
    assert "preview.json" in err and all(w in err for w in words), err


def test_a_surrogate_pair_is_a_character_not_a_refusal(tmp_path: Path) -> None:
    """The check refuses lone surrogates only: an escaped pair is one character outside the BMP (RFC 8259 7)."""
    from gpuinfra.spec.files import loads_json

    path = tmp_path / "pair.json"
    assert loads_json('{"x": "\\ud83d\\ude80"}', path, "the document", "") == {"x": "\U0001f680"}


# ---- --out ---------------------------------------------------------------------------------------------
def test_out_to_a_fifo_is_refused_without_blocking(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    refused(cli("validate", TRAIN, "--out", str(fifo)), "report.json", "not a regular file")


@pytest.mark.parametrize("target", ["Pulumi.x.yaml", "org.yaml"])
def test_out_never_overwrites_an_input(target: str, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    stack = tmp_path / "Pulumi.x.yaml"
    shutil.copy(TRAIN, stack)
    shutil.copy(STACKS / "org.yaml", tmp_path / "org.yaml")
    before = (tmp_path / target).read_bytes()
    refused(cli("validate", str(stack), "--out", str(tmp_path / target)), "over an input of this run")
    assert (tmp_path / target).read_bytes() == before


def test_out_by_stack_name_never_overwrites_the_stack_file(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "project"
    shutil.copytree(STACKS, project / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    monkeypatch.chdir(project)
    before = (project / "stacks" / "Pulumi.llm-train.yaml").read_bytes()
    refused(cli("validate", "llm-train", "--out", "stacks/Pulumi.llm-train.yaml"), "over an input of this run")
    assert (project / "stacks" / "Pulumi.llm-train.yaml").read_bytes() == before


def test_out_replaces_a_report_atomically(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "report.json"
    report.write_text("old")
    code, _, err = cli("validate", TRAIN, "--format", "json", "--out", str(report))
    assert code == 0, err
    assert json.loads(report.read_text())["command"] == "validate"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary file left beside it


# ---- signals -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_review_removes_the_worktree_and_temporary_folders(sig: int, code: int, tmp_path: Path) -> None:
    """`diff --base-ref` checks the base out into a git worktree and previews it in a subprocess; a signal
    while that runs ends the run with 128 + the signal and leaves no worktree and no temporary folder."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for --base-ref") if os.environ.get("CI") else pytest.skip("no git")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    run = subprocess.Popen(
        [sys.executable, "-c", "from gpuinfra.cli import run; run()", "diff", "--base-ref", "HEAD"],
        cwd=clone,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(worktrees(clone)) < 2:  # wait until the base's worktree exists: the signal lands mid-review
        assert run.poll() is None, run.stderr.read() if run.stderr else ""
        assert time.monotonic() < deadline, "the base worktree never appeared"
        time.sleep(0.05)
    run.send_signal(sig)
    _, err = run.communicate(timeout=120)
    assert run.returncode == code, err
    assert "Traceback" not in err, err
    assert worktrees(clone) == [str(clone)]
    assert list(temp.iterdir()) == []


def worktrees(repo: Path) -> list[str]:
    listed = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True)
    return [line.split(" ", 1)[1] for line in listed.stdout.splitlines() if line.startswith("worktree ")]
