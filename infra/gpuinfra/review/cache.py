"""The base side of `diff --base-ref`, kept by content (`--cache-dir`): the base revision's preview document is
a pure function of its inputs, so a review whose base has not changed (every push to a pull request against the
same main) reuses it instead of previewing every stack again with the base's code.

The key is a SHA-256 over everything that preview reads: the base commit's git *tree* (the content address of
every file at that revision: the package's code, the templates, the stack files and the organization file, the
other stacks the policy ledger and the registry's access flows read, the catalog), the stacks asked for, the
preview flags and the content of the files they name (usage file, policy config), the Python version and the
installed distributions' versions. An entry carries a SHA-256 over its key and its content and is used only when
both check out: a truncated, edited or foreign entry is ignored (then overwritten), never trusted. Writes are
atomic (a temporary file renamed into place), so two reviews sharing a cache cannot read half an entry.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuinfra.spec.files import read_bytes_or_none
from gpuinfra.store.fingerprint import environment
from gpuinfra.store.sealed import read_sealed, write_sealed

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""review.documents.MAX_DOCUMENT_BYTES (not imported: documents imports the pricing stages, a cache lookup need not)."""

FORMAT = "gpuinfra-base-preview-2"


@dataclass(frozen=True)
class Entry:
    label: str
    notes: list[str]
    document: str
    """The base's `gpuinfra preview --format json` document, as its code wrote it."""


MAX_ENTRY_BYTES = 2 * MAX_DOCUMENT_BYTES
"""An entry holds one preview document (JSON-escaped inside the entry, so up to about twice its size)."""
MAX_KEYED_FILE_BYTES = 64 * 1024 * 1024
"""A usage file or policy configuration hashed into the key: their readers refuse anything past a few MiB."""


def _file_digest(path: str) -> str:
    data = read_bytes_or_none(Path(path), MAX_KEYED_FILE_BYTES)  # a FIFO or /dev/zero named here never hangs
    return "unreadable" if data is None else hashlib.sha256(data).hexdigest()


def base_key(tree: str, stacks: Iterable[str], flags: list[str]) -> str:
    """The content address of one base preview: `tree` is `git rev-parse REF^{tree}`."""
    pairs = itertools.pairwise(flags)
    files = [_file_digest(value) for name, value in pairs if name in ("--usage-file", "--policy-config")]
    clock = os.environ.get("SOURCE_DATE_EPOCH", "")  # reproducible builds' clock: dates in the document
    parts = [FORMAT, tree, json.dumps(sorted(stacks)), json.dumps(flags), *files, clock, *environment()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def read(cache_dir: Path, key: str) -> Entry | None:
    """The entry for `key`, or None when absent or not sound (not sealed by this reviewer's key, wrong key, not
    the expected shape, too large)."""
    payload = read_sealed(cache_dir / f"{key}.json", FORMAT, key, MAX_ENTRY_BYTES)
    if payload is None:
        return None
    try:
        data = json.loads(payload)
        entry = Entry(str(data["label"]), [str(n) for n in data["notes"]], str(data["document"]))
    except (ValueError, KeyError, TypeError):
        return None
    return entry if data.get("key") == key else None


def write(cache_dir: Path, key: str, entry: Entry) -> None:
    """Store `entry` sealed and atomically; a cache that cannot be written is no error (the review is made)."""
    payload = json.dumps({"key": key, "label": entry.label, "notes": entry.notes, "document": entry.document}).encode()
    write_sealed(cache_dir / f"{key}.json", FORMAT, key, payload)


__all__ = ["Entry", "base_key", "read", "write"]
