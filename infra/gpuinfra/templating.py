"""One Jinja2 environment over the project's top-level `templates/` folder, read as package data
(`gpuinfra.templates`, mapped onto `templates/` by setuptools' package-dir in pyproject.toml), so an installed
wheel renders exactly what the source tree does. Folders: `training/`, `inference/`, `kubernetes/` (node
bootstrap, Slurm, Kubernetes objects) and `report/` (the Markdown reports)."""

from __future__ import annotations

import base64
import gzip
import re
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


def packed(text: Any) -> str:
    """The `packed` filter: gzip then base64, for a cloud-init write_files entry with `encoding: gz+b64` (cloud-init
    cc_write_files: decoded with base64, then gunzipped, before it is written). mtime 0: the same text always packs
    to the same bytes, so an unchanged script is no diff."""
    return base64.b64encode(gzip.compress(str(text).encode(), compresslevel=9, mtime=0)).decode()


PACKED_ENTRY = re.compile(r"^( *)encoding: gz\+b64\n +content: ([A-Za-z0-9+/=]+)$", re.M)


def unpacked(cloud_config: str) -> str:
    """`packed`'s inverse over a whole cloud-config (or the MIME around it), for people reading it (the diff's user
    data, the golden files): each gz+b64 write_files content shown as the text cloud-init writes, under a note."""

    def one(match: re.Match[str]) -> str:
        indent = match.group(1)
        text = gzip.decompress(base64.b64decode(match.group(2))).decode()
        body = "".join(f"{indent}  {line}\n" if line else "\n" for line in text.splitlines())
        note = f"{indent}# encoding: gz+b64 in the user data; unpacked here as cloud-init writes it\n"
        return f"{note}{indent}content: |\n{body}"

    return PACKED_ENTRY.sub(one, cloud_config)


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
    env.filters["packed"] = packed
    return env


def renderer(folder: str = "") -> Any:
    """`render(name, **context) -> str` over the templates in `folder` ("" for names that carry their folder)."""
    prefix = f"{folder}/" if folder else ""

    def render(name: str, **context: Any) -> str:
        return environment().get_template(prefix + name).render(**context)

    return render


__all__ = ["TEMPLATES_PACKAGE", "environment", "packed", "renderer", "shell_quote", "templates_folder", "unpacked"]
