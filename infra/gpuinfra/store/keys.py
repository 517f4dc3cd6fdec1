"""One content address for everything kept across processes: what was computed (`kind` and the layout's
`version`), by which code (the package's files and the installed distributions), from which inputs, at which
clock (the catalog's staleness reads SOURCE_DATE_EPOCH and the price age limit). Two results share a key only
when all of these are equal, so an entry can never be read for inputs or code it was not made from."""

from __future__ import annotations

import hashlib
import os

from gpuinfra.store.fingerprint import code_fingerprint

PRICE_MAX_AGE_ENV = "GPUINFRA_PRICE_MAX_AGE_DAYS"
"""The catalog's price age limit (gpuinfra.catalog.staleness reads the same variable)."""


def clock() -> str:
    """What a result's staleness verdicts read from the environment."""
    return f"{os.environ.get('SOURCE_DATE_EPOCH', '')}|{os.environ.get(PRICE_MAX_AGE_ENV, '')}"


def content_key(kind: str, version: int, *inputs: bytes | str) -> str:
    """The key of a `kind` result (layout `version`) computed from `inputs` (each a name or a file's bytes)."""
    digest = hashlib.sha256()
    for part in inputs:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return f"{kind}-{version}|{code_fingerprint()}|{digest.hexdigest()}|{clock()}"


__all__ = ["clock", "content_key"]
