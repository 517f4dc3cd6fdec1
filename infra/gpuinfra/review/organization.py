"""In a review, the organization file is trusted from the base, never from the change under review.

The organization file holds the facts every stack is judged by: which account is for training, what quota was
granted, what an account may spend. A pull request that edits it could relabel an account's purpose or raise a
budget tenfold, and its stacks would pass against the facts it wrote. So `diff --base-ref` judges the head's stacks
against the base revision's organization file, and shows the change to the file itself as its own section of the
review, for the people who own it (a platform team) to approve on its own."""

from __future__ import annotations

import difflib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpuinfra.spec.files import read_bytes_or_none

MAX_ORG_BYTES = 4 * 1024 * 1024
"""The stack reader's limit for every YAML file (gpuinfra.spec.yamlfile.MAX_BYTES)."""
MAX_DIFF_LINES = 60


@dataclass(frozen=True)
class OrganizationChange:
    path: str
    """The file's path in the repository."""
    base: bytes
    """The base revision's file: what the head's stacks are judged by."""
    lines: tuple[str, ...]
    """The change, as a unified diff."""

    def notes(self) -> list[str]:
        shown = list(self.lines[:MAX_DIFF_LINES])
        if len(self.lines) > MAX_DIFF_LINES:
            shown.append(f"... {len(self.lines) - MAX_DIFF_LINES} more lines")
        return [
            f"the organization file {self.path} changed: the head's stacks are judged by the base's (trusted) file; "
            "the change is for its owners to review on its own, and takes effect once it has landed",
            *(f"organization change: {line}" for line in shown),
        ]


def organization_change(root: Path, sha: str, head: Path) -> OrganizationChange | None:
    """The change to the organization file `head` between the base commit `sha` and the working tree; None when
    it did not change, lies outside the repository, or the base has none (nothing to trust instead)."""
    try:
        relative = head.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return None
    base = _blob(root, f"{sha}:{relative}")
    current = read_bytes_or_none(head, MAX_ORG_BYTES)
    if base is None or current is None or base == current:
        return None
    diff = difflib.unified_diff(
        base.decode("utf-8", "replace").splitlines(),
        current.decode("utf-8", "replace").splitlines(),
        f"base/{relative}",
        f"head/{relative}",
        lineterm="",
        n=1,
    )
    return OrganizationChange(relative, base, tuple(diff))


def _blob(root: Path, spec: str) -> bytes | None:
    """A file of a commit, when it is one and within the size limit (git's own size, asked first)."""
    size = subprocess.run(["git", "cat-file", "-s", spec], cwd=root, capture_output=True, text=True, timeout=60)
    if size.returncode != 0 or not size.stdout.strip().isdigit() or int(size.stdout) > MAX_ORG_BYTES:
        return None
    blob = subprocess.run(["git", "cat-file", "blob", spec], cwd=root, capture_output=True, timeout=60)
    return blob.stdout if blob.returncode == 0 else None


__all__ = ["OrganizationChange", "organization_change"]
