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

from gpuinfra.errors import InputError, Problem
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
    base = base_blob(root, sha, relative)
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


def base_blob(root: Path, sha: str, relative: str) -> bytes | None:
    """The organization file of a commit; None when the commit has none (nothing to trust instead). One it has
    but that cannot be the trusted file (a symlink, a folder, over the size limit, not UTF-8) is an input error
    naming it: the head is never judged by its own file instead (fail closed)."""
    listed = subprocess.run(
        ["git", "ls-tree", "-z", sha, "--", relative], cwd=root, capture_output=True, timeout=60
    ).stdout.split(b"\0")[0]
    if not listed:
        return None
    mode, kind = listed.split(b" ")[:2]
    why = None
    if kind != b"blob" or mode not in (b"100644", b"100755"):
        why = "is not a regular file at the base (a symlink, a folder or a submodule)"
    spec = f"{sha}:{relative}"
    size = subprocess.run(["git", "cat-file", "-s", spec], cwd=root, capture_output=True, text=True, timeout=60)
    if why is None and (not size.stdout.strip().isdigit() or int(size.stdout) > MAX_ORG_BYTES):
        found = size.stdout.strip() or "an unknown number of"
        why = f"is {found} bytes at the base, over the {MAX_ORG_BYTES:,}-byte limit"
    blob = (
        b""
        if why
        else subprocess.run(["git", "cat-file", "blob", spec], cwd=root, capture_output=True, timeout=60).stdout
    )
    if why is None:
        try:
            blob.decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"is not UTF-8 text at the base (byte {exc.start})"
    if why is not None:
        raise InputError(
            [
                Problem(
                    f"the trusted organization file {why}; the head's stacks cannot be judged by it, and are never "
                    "judged by the head's own copy instead",
                    file=Path(relative),
                    hint="fix the organization file on the base branch (a regular UTF-8 file, at most 4 MiB), or "
                    "name a trusted one with --org",
                )
            ]
        )
    return blob


__all__ = ["OrganizationChange", "base_blob", "organization_change"]
