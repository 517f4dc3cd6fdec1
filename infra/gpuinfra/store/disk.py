"""Preflight's definitions (botocore service models, cfn-lint's CloudFormation schemas) and the policy ledger's
totals of the other stacks kept on disk in a compiled form, so a fresh process reads them in milliseconds instead
of importing and parsing their libraries (or building every other stack of the account in the engine).

One file per entry under the user's cache directory (`$XDG_CACHE_HOME/gpuinfra/compiled`, else
`~/.cache/gpuinfra/compiled`; `GPUINFRA_CACHE_DIR` overrides), named by a hash of its key, which always holds
the library versions it was read from, so an upgrade reads afresh. The content is `marshal` (plain JSON-like
data: loading it runs no code, unlike pickle), sealed with an HMAC under the reviewer's key
(gpuinfra.store.sealed): an entry that is truncated, corrupted, written for another key or forged is ignored and
rebuilt. Writes are atomic, so two processes starting at once each see either no entry or a whole one. A cache
that cannot be written is no error: the data is simply built again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gpuinfra.store.sealed import read_sealed, write_sealed

T = TypeVar("T")
FORMAT = b"gpuinfra-compiled-2"
"""Bumped when the layout of an entry changes."""


def cache_root() -> Path:
    """Where compiled definitions live: GPUINFRA_CACHE_DIR, else the XDG cache directory."""
    explicit = os.environ.get("GPUINFRA_CACHE_DIR")
    if explicit:
        return Path(explicit) / "compiled"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpuinfra" / "compiled"


def plain(value: Any) -> Any:
    """JSON-like data with every mapping a plain dict (botocore reads its models into OrderedDicts, which
    marshal does not take; dicts keep insertion order, so nothing about the data changes)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


MAX_ENTRY_BYTES = 256 * 1024 * 1024
"""The largest entry read back (botocore's compiled EC2 model is about 3 MB)."""


def _path(key: str) -> Path:
    return cache_root() / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".marshal")


def read(key: str) -> Any | None:
    """The entry for `key`, or None when absent, unreadable, corrupted, another key's or not sealed by this
    reviewer's key (gpuinfra.store.sealed)."""
    payload = read_sealed(_path(key), FORMAT.decode(), key, MAX_ENTRY_BYTES)
    if payload is None:
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def write(key: str, value: Any) -> None:
    """Store `value` for `key` atomically; silently nothing when the cache cannot be written."""
    try:
        payload = marshal.dumps(value)
    except ValueError:
        return
    write_sealed(_path(key), FORMAT.decode(), key, payload)


def cached(key: str, build: Callable[[], T]) -> T:
    """`build()`'s result, read from the cache when a sound entry for `key` exists, else built and stored."""
    found = read(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    value = plain(build())
    write(key, value)
    return value  # type: ignore[no-any-return]


__all__ = ["cache_root", "cached", "plain", "read", "write"]
