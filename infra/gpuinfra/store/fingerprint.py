"""The content address of the code a result was computed by: every file of the installed gpuinfra package (its
modules, the catalog's data files, the templates), the interpreter and every installed distribution's version.
Results kept across processes (the policy ledger's totals, the base side of a review) are keyed by it, so a
change to the code or an upgraded dependency never reuses a result the old code made."""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from functools import cache
from pathlib import Path


def environment() -> list[str]:
    """The interpreter and every installed distribution's name and version, sorted: the names of the
    `*.dist-info` / `*.egg-info` folders on sys.path, which carry both (PyPA's recording of installed projects);
    listing folders costs milliseconds where reading each distribution's METADATA costs 0.2 s."""
    found: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found.update(n for n in names if n.endswith((".dist-info", ".egg-info")))
    return [platform.python_implementation(), platform.python_version(), *sorted(found)]


def _package_files() -> list[tuple[str, Path]]:
    """(name relative to its root, file) of the package's and the templates' files."""
    import gpuinfra
    import gpuinfra.templates

    out = {}
    for root in (Path(p) for p in (*gpuinfra.__path__, *gpuinfra.templates.__path__)):
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                out[f"{root.name}/{path.relative_to(root).as_posix()}"] = path
    return sorted(out.items())


@cache
def code_fingerprint() -> str:
    """SHA-256 over the package's files (relative names and contents) and `environment()`; once per process."""
    digest = hashlib.sha256()
    for name, path in _package_files():
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    for item in environment():
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()


@cache
def package_blobs() -> dict[str, str]:
    """The package's and the templates' files as git names them (`gpuinfra/...`, `templates/...`) -> the git
    blob id of their content (SHA-1 over `blob <size>\\0<content>`, git-hash-object(1)): what a commit's tree
    lists for the same files, so a revision's code can be told to be this code without checking it out."""
    out = {}
    for name, path in _package_files():
        data = path.read_bytes()
        out[name] = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    return out


__all__ = ["code_fingerprint", "environment", "package_blobs"]
