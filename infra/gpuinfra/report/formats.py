"""The output formats' names, found without importing the renderers: the CLI's `--format` choices at `--help`
speed (importing render/ loads the report model and every stage it reads)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

HELPERS = frozenset({"parts"})
"""Modules of render/ that are not a format."""


def format_names() -> list[str]:
    """One per renderer module in render/ (what `render.FORMATS` imports), sorted."""
    folder = Path(__file__).parent / "render"
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name not in HELPERS)


__all__ = ["HELPERS", "format_names"]
