"""One hostile file beside the stacks (a FIFO, a link to /dev/zero, a sparse 6 GiB file, an unreadable folder)
makes every other stack's `validate` and `preview` exit 2 naming it, within seconds: the workspace reads the
folder's stack files once, through one bounded reader, before anything else. A file that is not a stack file
(not Pulumi.*.yaml) is not read at all."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import STACKS, gpuinfra, without_dac

SIX_GIB = 6 * 1024**3


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(SIX_GIB)


HOSTILE: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev-zero": _zero, "sparse-6gib": _sparse}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    for name in ("org.yaml", "Pulumi.llm-train.yaml", "Pulumi.llm-train-eks.yaml"):
        shutil.copy(STACKS / name, stacks / name)
    return stacks


@pytest.mark.parametrize("command", ["validate", "preview"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_stack_file_beside_the_stack_exits_2_naming_it(folder: Path, kind: str, command: str) -> None:
    bad = folder / "Pulumi.bad.yaml"
    HOSTILE[kind](bad)
    started = time.monotonic()
    result = gpuinfra(command, str(folder / "Pulumi.llm-train.yaml"), cwd=folder.parent)
    assert time.monotonic() - started < 60
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Pulumi.bad.yaml" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_file_that_is_not_a_stack_file_is_not_read(folder: Path, kind: str) -> None:
    HOSTILE[kind](folder / "notes.txt")
    result = gpuinfra("validate", str(folder / "Pulumi.llm-train.yaml"), cwd=folder.parent)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "notes.txt" not in result.stderr + result.stdout


def test_an_unreadable_stack_folder_exits_2(folder: Path) -> None:
    """Under root too, as root without CAP_DAC_* (helpers.without_dac): the folder cannot be listed."""
    prefix = without_dac()
    folder.chmod(0o300)
    try:
        result = gpuinfra("validate", str(folder / "Pulumi.llm-train.yaml"), cwd=folder.parent, prefix=prefix)
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "stacks" in result.stderr and "Permission denied" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["validate", "preview"])
def test_an_unreadable_stack_file_beside_the_stack_exits_2_naming_it(folder: Path, command: str) -> None:
    """A sibling stack file of mode 000 (under root too): the ledgers cannot be judged without it."""
    prefix = without_dac()
    (folder / "Pulumi.llm-train-eks.yaml").chmod(0o000)
    started = time.monotonic()
    result = gpuinfra(command, str(folder / "Pulumi.llm-train.yaml"), cwd=folder.parent, prefix=prefix)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Pulumi.llm-train-eks.yaml" in result.stderr and "Permission denied" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 120
