"""One Jinja2 environment over the project's top-level `templates/` folder, read as package data
(`gpuinfra.templates`, mapped onto `templates/` by setuptools' package-dir in pyproject.toml), so an installed
wheel renders exactly what the source tree does. Folders: `training/`, `inference/`, `kubernetes/` (node
bootstrap, Slurm, Kubernetes objects) and `report/` (the Markdown reports)."""

from __future__ import annotations

import base64
import gzip
import json
import math
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
    """The `sh` filter, the one way a value enters a shell template: one shell word whatever the value holds
    (`$(...)`, backticks, `;`, quotes, line breaks). Printable text goes through `shlex.quote` (POSIX single quotes,
    which bash reads literally: "Enclosing characters in single quotes preserves the literal value of each character
    within the quotes", Bash Reference Manual 3.1.2.2); text with a control or unprintable character is written
    `$'...'` with each such character's UTF-8 bytes escaped (ANSI-C quoting, Bash Reference Manual 3.1.2.4), so the
    word never holds a raw line break and stays inert in a comment too. A test scans every template for an
    expression that ends without it (tests/test_templating.py). A list or tuple gives one word per item,
    space-separated (an argument vector, like `shlex.join`)."""
    if isinstance(value, (list, tuple)):
        return " ".join(shell_quote(item) for item in value)
    text = str(value)
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(_ansi_c(ch) for ch in text) + "'"


def _ansi_c(ch: str) -> str:
    if ch in "\\'":
        return "\\" + ch
    if ch.isprintable():
        return ch
    # Each UTF-8 byte as \\xHH: bash's \\u escapes depend on the locale, and systemd runs units without LANG.
    return "".join(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))


YAML_PLAIN = re.compile(r"^[A-Za-z/][A-Za-z0-9_./@+-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
"""Plain scalars a YAML 1.1 reader (cloud-init's PyYAML) or 1.2 reader would read as something other than the string."""


def yaml_scalar(value: Any) -> str:
    """The `yaml` filter, the one way a value enters a YAML template (cloud-config, the JobSet): a plain scalar when
    the text is one (starts with a letter or `/`, holds only letters, digits and `_./@+-`, and is no YAML 1.1 boolean
    or null word), else a double-quoted scalar with every quote, backslash, line break and unprintable character
    escaped. Numbers and booleans are written as JSON writes them; so a value can never start a new key, item or
    document."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return json.dumps(value)
    if isinstance(value, float) and math.isfinite(value):
        mantissa, e, exponent = repr(value).partition("e")  # YAML 1.1 floats need a dot: 1e-05 is 1.0e-05
        return f"{mantissa}{'' if '.' in mantissa else '.0'}{e}{exponent}"
    text = str(value)
    if YAML_PLAIN.fullmatch(text) and text.lower() not in YAML_WORDS:
        return text
    return '"' + "".join(_yaml_escape(ch) for ch in text) + '"'


def _yaml_escape(ch: str) -> str:
    """One character of a YAML double-quoted scalar (YAML 1.2 section 5.7, escaped characters; 1.1 has the same):
    `\\xHH`, `\\uHHHH` or `\\UHHHHHHHH` for anything unprintable, the line breaks NEL, LS and PS included, and
    astral characters written whole (a JSON surrogate pair is two characters to PyYAML)."""
    if ch in '"\\':
        return "\\" + ch
    if ch.isprintable():
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


SLURM_VALUE = re.compile(r"^[A-Za-z0-9_.:@%+,/=-]+$")


def slurm_value(value: Any) -> str:
    """The `slurm` filter, for an `#SBATCH` directive (sbatch reads those lines itself, not bash): the value as it
    is when it is one plain token, refused otherwise. The spec types that reach a directive (spec.words.SlurmValue)
    allow only these characters, so a refusal here is a bug, not a user error."""
    text = str(value)
    if not SLURM_VALUE.fullmatch(text):
        raise ValueError(f"not a plain Slurm value for an #SBATCH line: {text!r}")
    return text


def one_line(value: Any) -> str:
    """The `line` filter, for a YAML comment: the text as it is, with each control or unprintable character (a line
    break above all, which would end the comment and start a new key) written as a Python escape (`\\n`)."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode() for ch in text)


PYTHON_LITERALS = (str, int, bool, type(None))


def python_literal(value: Any) -> str:
    """The `py` filter, for a Python template's constant (`NAME = {{ v | py }}`): `repr` of a string, integer, boolean
    or None, or of a list, tuple or dict of them, which `ast.literal_eval` reads back as the value (repr escapes every
    unprintable character, so the literal stays on its line). JSON is not one: an astral character is two surrogate
    escapes there, which Python reads as two characters. Anything else is refused."""
    if not _python_literal(value):
        raise ValueError(f"not a Python literal value for a template constant: {type(value).__name__}")
    return repr(value)


def _python_literal(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_python_literal(item) for item in value)
    if isinstance(value, dict):
        return all(_python_literal(k) and _python_literal(v) for k, v in value.items())
    return isinstance(value, PYTHON_LITERALS)


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
    env.filters["slurm"] = slurm_value
    env.filters["line"] = one_line
    env.filters["yaml"] = yaml_scalar
    env.filters["py"] = python_literal
    return env


def renderer(folder: str = "") -> Any:
    """`render(name, **context) -> str` over the templates in `folder` ("" for names that carry their folder)."""
    prefix = f"{folder}/" if folder else ""

    def render(name: str, **context: Any) -> str:
        return environment().get_template(prefix + name).render(**context)

    return render


__all__ = [
    "TEMPLATES_PACKAGE",
    "environment",
    "one_line",
    "packed",
    "python_literal",
    "renderer",
    "shell_quote",
    "slurm_value",
    "templates_folder",
    "unpacked",
    "yaml_scalar",
]
