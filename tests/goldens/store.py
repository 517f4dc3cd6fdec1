"""Golden files and their manifest: a golden changes only when `make goldens` rewrites it.

`make goldens` runs the golden tests with --update-goldens: each writes its render and records the file's
SHA-256 in MANIFEST.json beside the goldens. Without the flag, a test compares the render with the file, and
test_goldens checks every file still has the hash the command recorded, so an edit by hand (or a stale merge)
fails, naming the command that regenerates it."""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MANIFEST = Path(__file__).parent / "MANIFEST.json"
COMMAND = "make goldens"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(manifest: Path = MANIFEST) -> dict[str, str]:
    return json.loads(manifest.read_text()) if manifest.exists() else {}


def check_golden(path: Path, text: str, update: bool, manifest: Path = MANIFEST, root: Path = ROOT) -> None:
    """Compare `text` with the golden at `path`; with `update`, rewrite it and its manifest entry first."""
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        entries = read_manifest(manifest)
        entries[path.resolve().relative_to(root.resolve()).as_posix()] = digest(path)
        manifest.write_text(json.dumps(dict(sorted(entries.items())), indent=2) + "\n")
    assert path.exists(), f"no golden {path}: run `{COMMAND}`"
    expected = path.read_text()
    assert text == expected, f"the render differs from its golden; if the change is intended, run `{COMMAND}`\n" + (
        "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "now"))
    )


__all__ = ["COMMAND", "MANIFEST", "ROOT", "check_golden", "digest", "read_manifest"]
