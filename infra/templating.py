"""Jinja2 environments over a package's `templates/` folder, read as package data (jinja2.PackageLoader), so
an installed wheel renders the same as the source tree. Two packages have templates: `infra.pulumi` (node
bootstrap, Slurm, Kubernetes objects) and `infra.report` (the Markdown reports)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined


@lru_cache(maxsize=4)
def environment(package: str) -> Environment:
    """Strict: a missing variable is an error, not an empty string in a rendered script."""
    return Environment(
        loader=PackageLoader(package, "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # package data never changes under a running process: no stat per render
    )


def renderer(package: str) -> Any:
    """`render(name, **context) -> str` over `package`'s templates."""

    def render(name: str, **context: Any) -> str:
        return environment(package).get_template(name).render(**context)

    return render


__all__ = ["environment", "renderer"]
