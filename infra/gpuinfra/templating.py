"""One Jinja2 environment over the project's top-level `templates/` folder, read as package data
(`gpuinfra.templates`, mapped onto `templates/` by setuptools' package-dir in pyproject.toml), so an installed
wheel renders exactly what the source tree does. Folders: `training/`, `inference/`, `kubernetes/` (node
bootstrap, Slurm, Kubernetes objects) and `report/` (the Markdown reports)."""

from __future__ import annotations

import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

TEMPLATES_PACKAGE = "gpuinfra.templates"
_PACKAGE = Path(__file__).resolve().parent


def templates_folder() -> Path:
    """The templates that belong to this code: the wheel's gpuinfra/templates/, or in a source checkout the
    top-level templates/ beside infra/ (found from this file, not through an import, so a checkout run with
    PYTHONPATH=infra, as `diff --base-ref` runs the base, never renders another checkout's templates)."""
    for folder in (_PACKAGE / "templates", _PACKAGE.parent.parent / "templates"):
        if (folder / "__init__.py").is_file():
            return folder
    raise RuntimeError(f"gpuinfra's templates are missing beside {_PACKAGE}: reinstall gpuinfra")


def shell_quote(value: Any) -> str:
    """The `sh` filter: one shell word whatever the value holds (`$(...)`, backticks, `;`, newlines, quotes):
    `shlex.quote`, POSIX single quotes, which bash reads literally ("Enclosing characters in single quotes
    preserves the literal value of each character within the quotes", Bash Reference Manual 3.1.2.2).
    Every spec value that is not restricted by its schema's pattern goes through it in a shell template."""
    return shlex.quote(str(value))


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Strict: a missing variable is an error, not an empty string in a rendered script."""
    env = Environment(
        loader=FileSystemLoader(templates_folder()),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # package data never changes under a running process: no stat per render
    )
    env.filters["sh"] = shell_quote
    return env


def renderer(folder: str = "") -> Any:
    """`render(name, **context) -> str` over the templates in `folder` ("" for names that carry their folder)."""
    prefix = f"{folder}/" if folder else ""

    def render(name: str, **context: Any) -> str:
        return environment().get_template(prefix + name).render(**context)

    return render


__all__ = ["TEMPLATES_PACKAGE", "environment", "renderer", "shell_quote", "templates_folder"]
