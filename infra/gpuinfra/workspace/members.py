"""The repository's stack files, each read once through the bounded reader.

A stack is judged with its folder's other stacks (quotas, budgets, the registry's flows), so every preview reads
them. One FIFO, device link or huge file among them would hang or exhaust every such read: it is refused here,
before anything else, naming the file (exit 2). A stack file that is readable but does not parse or does not
resolve is kept as a member whose problem the account checks report (never counted as zero).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from stat import S_ISREG

from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.spec import WorkloadSpec, read_stack
from gpuinfra.spec.yamlfile import MAX_BYTES

STACK_GLOB = "Pulumi.*.yaml"
HINT = (
    "a stack folder holds only stack files: move or remove it (a stack file is a regular file of at most 4 MiB), "
    "or rename it so it does not match Pulumi.*.yaml"
)


def stack_name(path: Path) -> str:
    """Pulumi.<stack>.yaml -> <stack>: the one place a stack's name is read from its file's name."""
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


@dataclass(frozen=True)
class Member:
    """One stack file of the folder."""

    path: Path
    data: bytes
    """The file's bytes, read once (bounded)."""

    @property
    def stack(self) -> str:
        return stack_name(self.path)

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @cached_property
    def spec(self) -> WorkloadSpec | None:
        """The stack's spec, or None when the file does not parse as a stack."""
        try:
            return read_stack(self.path).spec
        except GpuinfraError:
            return None


def stack_files(folder: Path) -> list[Path]:
    """The stack files of `folder`, sorted; an unreadable folder is an input error naming it. Listed with
    os.listdir, which raises: Path.glob answers an unlistable folder (mode -wx: its stack file can be opened, its
    siblings not listed) with no matches, and the account ledgers would have counted no other stack."""
    try:
        names = os.listdir(folder)
    except OSError as exc:
        raise InputError.single(f"cannot list the stack folder: {exc.strerror or exc}", file=folder) from None
    return sorted(folder / name for name in names if fnmatchcase(name, STACK_GLOB))


def file_stamp(path: Path) -> tuple[int, int]:
    """(size, modification time) of a file, (-1, -1) when it cannot be told: what per-process memos key by."""
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


def read_member(path: Path) -> Member:
    """The file's bytes, when it is a regular file within the stack file's size limit; else an InputError naming
    it. A read never blocks: FIFOs and devices are refused by their type before they are opened."""
    try:
        info = path.stat()
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError.single(
            f"a stack file beside the stack cannot be read: {reason}", file=path, hint=HINT
        ) from None
    if not S_ISREG(info.st_mode):
        raise InputError.single("a stack file beside the stack is not a regular file", file=path, hint=HINT)
    if info.st_size > MAX_BYTES:
        raise InputError.single(
            f"a stack file beside the stack is {info.st_size:,} bytes, over the {MAX_BYTES:,}-byte limit",
            file=path,
            hint=HINT,
        )
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError.single(
            f"a stack file beside the stack cannot be read: {exc.strerror or exc}", file=path, hint=HINT
        ) from None
    if len(data) > MAX_BYTES:
        raise InputError.single("a stack file beside the stack grew over the size limit", file=path, hint=HINT)
    return Member(path, data)


def read_members(folder: Path) -> list[Member]:
    """Every stack file of `folder`, read once."""
    return [read_member(path) for path in stack_files(folder)]


__all__ = ["STACK_GLOB", "Member", "file_stamp", "read_member", "read_members", "stack_files", "stack_name"]
