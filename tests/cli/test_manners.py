"""The CLI's manners: examples in every command's help, shell completion (typer's, of commands, options and the
project's stack names), no stack named = every stack of the project, a spinner on stderr only for a person at a
terminal, and tables as wide as that terminal (140 columns for pipes and files)."""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT, gpuinfra

COMMANDS = ["validate", "preview", "cost", "diff", "catalog", "init", "schema"]
CLI = [sys.executable, "-c", "from gpuinfra.cli import run; run()"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_examples_of_itself(command: str) -> None:
    result = gpuinfra(command, "--help")
    assert result.returncode == 0, result.stderr
    examples = result.stdout.split("Examples:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in examples.splitlines() if line.strip()]
    assert len(lines) >= 2
    for line in lines:
        words = shlex.split(line.split("  ")[0])
        assert words[:2] == ["gpuinfra", command], line


def complete(words: str, cword: int, cwd: Path = ROOT) -> list[str]:
    """Typer's bash completion protocol (the script --install-completion writes sets these variables)."""
    env = {**os.environ, "_GPUINFRA_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    script = Path(sys.executable).parent / "gpuinfra"  # the console script pip installs: its name is the program's
    result = subprocess.run([str(script)], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_shell_completion_of_commands_options_and_stacks() -> None:
    assert complete("gpuinfra pre", 1) == ["preview"]
    assert complete("gpuinfra preview --for", 2) == ["--format"]
    assert complete("gpuinfra validate llm-train-", 2) == [
        "llm-train-eks",
        "llm-train-gcp",
        "llm-train-gcp-slurm",
        "llm-train-onprem",
    ]
    assert "--install-completion" in gpuinfra("--help").stdout


def project_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    return tmp_path


def test_validate_without_a_stack_means_every_stack(tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    result = gpuinfra("validate", "--format", "json", cwd=project)
    assert result.returncode == 0, result.stderr
    import json

    assert sorted(s["stack"] for s in json.loads(result.stdout)["stacks"]) == sorted(EXAMPLES)


def test_without_a_stack_or_a_project_it_says_what_to_do(tmp_path: Path) -> None:
    result = gpuinfra("preview", cwd=tmp_path)
    assert result.returncode == 2
    assert "no stack named, and no Pulumi project (Pulumi.yaml) here or above" in result.stderr
    assert "gpuinfra init" in result.stderr and "Traceback" not in result.stderr


def run_in_terminal(args: list[str], cwd: Path, columns: int) -> tuple[str, str]:
    """Run with stdout and stderr on two pseudo-terminals of `columns` columns; their text, control codes kept."""
    out_main, out_side = pty.openpty()
    err_main, err_side = pty.openpty()
    person = {key: value for key, value in os.environ.items() if key != "CI"}  # a person's terminal, not CI's log
    env = {**person, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    process = subprocess.Popen(args, cwd=cwd, stdout=out_side, stderr=err_side, stdin=subprocess.DEVNULL, env=env)
    os.close(out_side)
    os.close(err_side)
    chunks: dict[int, list[bytes]] = {out_main: [], err_main: []}
    open_fds = [out_main, err_main]
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [], 300)
        if not ready:
            break
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the other side closed (Linux reports EIO)
                data = b""
            if data:
                chunks[fd].append(data)
            else:
                open_fds.remove(fd)
    process.wait(timeout=300)
    return b"".join(chunks[out_main]).decode(errors="replace"), b"".join(chunks[err_main]).decode(errors="replace")


def test_a_terminal_gets_its_width_and_a_spinner_a_pipe_neither(tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    stdout, stderr = run_in_terminal([*CLI, "preview", "llm-train"], project, columns=100)
    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in stdout.replace("\r", "").splitlines()]
    assert max(len(line) for line in lines) == 100, max(len(line) for line in lines)
    assert "previewing 1 stack..." in stderr  # preview takes seconds: the spinner had time to show

    piped = gpuinfra("preview", "llm-train", cwd=project)
    assert piped.returncode == 0
    assert max(len(line) for line in piped.stdout.splitlines()) == 140
    assert "previewing" not in piped.stderr
