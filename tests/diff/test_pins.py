"""The gpuinfra version a repository pins, read from its files in the working tree and at a commit through git
(size-checked before it is read), and the review's note when base and head pin different versions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gpuinfra.commands import pins
from gpuinfra.commands.pins import Pin, pin_at, pin_in_tree, pin_notes, pinned_version


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("gpuinfra==0.1.0\n", "0.1.0"),
        ("# pinned\npulumi>=3\n  gpuinfra[dev] == 1.2.3rc1  # the reviewer\n", "1.2.3rc1"),
        ('[project]\ndependencies = [\n  "gpuinfra==0.4.0",\n]\n', "0.4.0"),  # pyproject.toml
        (
            '[[package]]\nname = "gpuinfra"\nversion = "0.5.1"\nsource = { registry = "https://pypi.org/simple" }\n',
            "0.5.1",
        ),
        ('{"default": {"gpuinfra": {"hashes": [], "version": "==0.6.0"}}}', "0.6.0"),  # Pipfile.lock
        ("gpuinfra>=0.1\n", None),  # a range names no one version
        ("gpuinfra-extras==9.9\n", None),  # another package
        ("# gpuinfra==0.1.0 was the old pin\n", None),
    ],
)
def test_an_exact_pin_is_read_and_a_range_is_not(text: str, version: str | None) -> None:
    assert pinned_version(text) == version


def git(*args: str, cwd: Path) -> None:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, capture_output=True
    )
    assert done.returncode == 0, done.stderr


def test_the_pin_at_a_commit_and_in_the_tree_and_the_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git("init", "-q", "-b", "main", cwd=tmp_path)
    (tmp_path / "requirements.txt").write_text("gpuinfra==0.1.0\n")
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "pin", cwd=tmp_path)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    (tmp_path / "requirements.txt").write_text("gpuinfra==0.2.0\n")
    base, head = pin_at(tmp_path, sha), pin_in_tree(tmp_path)
    assert (base, head) == (Pin("requirements.txt", "0.1.0"), Pin("requirements.txt", "0.2.0"))
    assert pin_notes(base, head, "main") == [
        "gpuinfra version pin changes: gpuinfra==0.1.0 (requirements.txt) at main -> gpuinfra==0.2.0 "
        "(requirements.txt) in the working tree"
    ]
    assert pin_notes(base, base, "main") == []
    # a pin file over the bound is never read whole: it counts as no pin
    monkeypatch.setattr(pins, "MAX_PIN_FILE_BYTES", 8)
    assert pin_at(tmp_path, sha) is None and pin_in_tree(tmp_path) is None
