"""The Jinja2 environment for templates/ (node bootstrap, Slurm configuration, report Markdown)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Strict: a missing variable is an error, not an empty string in a rendered script."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


__all__ = ["TEMPLATES_DIR", "environment", "render"]
