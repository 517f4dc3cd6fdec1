"""Which gpuinfra a repository pins: `gpuinfra==X` in its requirements files, `pyproject.toml` or lock files, read
at a commit (through git, bounded) and in the working tree, so a review shows a change of the pin and
`--base-code pinned` knows which version previews the base.

Only an exact pin counts (`==X`, a lock file's resolved version): a range names no one version to run."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

MAX_PIN_FILE_BYTES = 1024 * 1024
"""The most of one pin file read (a requirements or lock file is far smaller)."""

PIN_FILES = (
    "requirements.txt",
    "requirements.lock",
    "requirements-dev.txt",
    "policies/requirements.txt",
    "pyproject.toml",
    "uv.lock",
    "poetry.lock",
    "Pipfile.lock",
)
"""The files a pin is looked for in, relative to the repository's top folder, in this order."""

REQUIREMENT = re.compile(r"""(?im)^\s*["']?gpuinfra(?:\[[^\]]*\])?\s*===?\s*([0-9][A-Za-z0-9.+!_-]*)""")
"""`gpuinfra==X` (or `gpuinfra[extra]==X`) at the start of a line or of a quoted pyproject string."""
LOCKED = re.compile(r"""(?m)^name\s*=\s*"gpuinfra"\s*\nversion\s*=\s*"([^"]+)\"""")
"""A uv.lock or poetry.lock package entry: `name = "gpuinfra"` then `version = "X"`."""
PIPFILE = re.compile(r'"gpuinfra"\s*:\s*\{[^}]*"version"\s*:\s*"==([^"]+)"')


@dataclass(frozen=True)
class Pin:
    file: str
    """Where it was found, relative to the repository's top folder."""
    version: str

    def text(self) -> str:
        return f"gpuinfra=={self.version} ({self.file})"


def pinned_version(text: str) -> str | None:
    """The exact version a file's text pins gpuinfra to, or None."""
    for pattern in (REQUIREMENT, LOCKED, PIPFILE):
        found = pattern.search(text)
        if found:
            return found.group(1)
    return None


def pin_in_tree(root: Path) -> Pin | None:
    """The working tree's pin: the first PIN_FILES entry that pins gpuinfra."""
    for name in PIN_FILES:
        path = root / name
        try:
            if not path.is_file() or path.stat().st_size > MAX_PIN_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        version = pinned_version(text)
        if version:
            return Pin(name, version)
    return None


def pin_at(root: Path, sha: str) -> Pin | None:
    """The pin at commit `sha`, each file read from git (`git cat-file`, its size checked first: a blob over
    the bound is skipped, never read whole)."""
    for name in PIN_FILES:
        text = _blob(root, f"{sha}:{name}")
        version = pinned_version(text) if text is not None else None
        if version:
            return Pin(name, version)
    return None


def _blob(root: Path, spec: str) -> str | None:
    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "cat-file", *args, spec], cwd=root, capture_output=True, timeout=60)

    try:
        kind = git("-t")
        if kind.returncode != 0 or kind.stdout.strip() != b"blob":
            return None
        size = git("-s")
        if size.returncode != 0 or int(size.stdout.strip() or b"0") > MAX_PIN_FILE_BYTES:
            return None
        data = git("blob")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return data.stdout.decode("utf-8", errors="replace") if data.returncode == 0 else None


def pin_notes(base: Pin | None, head: Pin | None, ref: str) -> list[str]:
    """A change of the pin between the base and the working tree, as the review's note; none when equal."""
    if base == head or (base is not None and head is not None and base.version == head.version):
        return []
    before = base.text() if base else "no pin"
    after = head.text() if head else "no pin"
    return [f"gpuinfra version pin changes: {before} at {ref} -> {after} in the working tree"]


__all__ = ["PIN_FILES", "Pin", "pin_at", "pin_in_tree", "pin_notes", "pinned_version"]
