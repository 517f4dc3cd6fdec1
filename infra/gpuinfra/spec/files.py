"""Bounded reading of every file a user names (stack, organization, usage, policy configuration, the JSON
documents `diff` and `cost` read), and the one safe way to write `--out`.

A review runner reads what a pull request produced, so every reader is bounded the same way: only regular
files (a FIFO blocks a reader forever, /dev/zero never ends), a size limit checked before and while reading,
UTF-8 required, JSON nesting checked before parsing (the parser recurses), and numbers finite and in range
(JSON has no NaN or infinity: RFC 8259 section 6; `1e400` overflows a double; Python refuses integers past
4,300 digits). Each refusal is an InputError (exit 2) naming the file and what to change."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISREG
from typing import Any

from gpuinfra.errors import InputError

MAX_JSON_DEPTH = 200
"""Deeper JSON is refused before it is parsed: no document gpuinfra reads nests a tenth as deep."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def read_text(path: Path, what: str, max_bytes: int, hint: str) -> str:
    """The file's text: a regular file of at most `max_bytes`, in UTF-8."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError.single(
            f"{what} not found", file=path, hint="check the path (and the link, if it is one)"
        ) from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop; OSError: a name too long, no search
        raise InputError.single(f"cannot read {what}: {_reason(exc)}", file=path, hint=hint) from None
    if not S_ISREG(info.st_mode):
        raise InputError.single(f"{what} is not a regular file", file=path, hint=hint)
    if info.st_size > max_bytes:
        raise InputError.single(
            f"{what} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit", file=path, hint=hint
        )
    try:
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)  # a file that grows while read is still bounded
    except OSError as exc:
        raise InputError.single(f"cannot read {what}: {_reason(exc)}", file=path, hint=hint) from None
    if len(data) > max_bytes:
        raise InputError.single(f"{what} is over the {max_bytes:,}-byte limit", file=path, hint=hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError.single(
            f"{what} is not UTF-8 text (byte {exc.start})", file=path, line=line, hint="save the file as UTF-8"
        ) from None


def loads_json(text: str, path: Path, what: str, hint: str) -> Any:
    """Parse JSON text with the limits above; every refusal names the file (and the line where known)."""
    too_deep = nesting_over(text, MAX_JSON_DEPTH)
    if too_deep is not None:
        raise InputError.single(
            f"{what}: JSON nested deeper than {MAX_JSON_DEPTH} levels", file=path, line=too_deep, hint=hint
        )
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except _NumberError as exc:
        raise InputError.single(
            f"{what}: {exc}", file=path, hint="write finite JSON numbers of ordinary size"
        ) from None
    except RecursionError:
        raise InputError.single(f"{what}: JSON nested too deeply to read", file=path, hint=hint) from None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(data):
        raise InputError.single(
            f"{what} holds a lone UTF-16 surrogate (\\ud800-\\udfff) in a string",
            file=path,
            hint="escape characters outside the BMP as a surrogate pair, or write them as UTF-8",
        )
    return data


def nesting_over(text: str, limit: int) -> int | None:
    """The line where brackets (outside strings) first nest past `limit`, or None: checked before parsing, so
    a hostile document neither recurses the parser nor is held in memory as a deep tree."""
    depth, line = 0, 1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return line
        elif token in "]}":
            depth -= 1
        elif token == "\n":
            line += 1
        else:
            line += token.count("\n")
    return None


class _NumberError(ValueError):
    """A JSON number gpuinfra cannot compute with."""


def _no_constant(name: str) -> float:
    raise _NumberError(f"{name} is not a JSON number (RFC 8259 section 6 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NumberError(f"the number {text[:40]} is beyond a double's range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:  # 10^30 is beyond any count or sum of money gpuinfra reads
        raise _NumberError(f"the integer {text[:20]}... has {len(text.lstrip('-')):,} digits")
    return int(text)


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def write_output(out: Path, text: str, inputs: Iterable[Path] = ()) -> None:
    """Write `text` to `out` atomically (a temporary file in the same folder, then a rename): a reader never
    sees half a report, and an interrupted run leaves the old file. Refuses a target that is not a regular
    file (a FIFO would block, a device would swallow the report) and any file the run reads."""
    hint = "give --out a new file path in a writable directory, not one of the inputs"
    try:
        info = out.stat()
    except FileNotFoundError:
        info = None
    except (OSError, RuntimeError) as exc:
        raise InputError.single(
            f"cannot write the report: {_blocked(out) or _reason(exc)}", file=out, hint=hint
        ) from None
    if info is not None:
        if not S_ISREG(info.st_mode):
            raise InputError.single("cannot write the report: the target is not a regular file", file=out, hint=hint)
        for source in inputs:
            try:
                same = source.exists() and os.path.samefile(source, out)
            except OSError:
                same = False
            if same:
                raise InputError.single(
                    f"cannot write the report over an input of this run ({source})", file=out, hint=hint
                )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{out.name[:80]}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:
        raise InputError.single(
            f"cannot write the report: {_blocked(out) or _reason(exc)}", file=out, hint=hint
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, out)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError.single(f"cannot write the report: {_reason(exc)}", file=out, hint=hint) from None
    except BaseException:  # an interrupt mid-write leaves no temporary file behind
        Path(temporary).unlink(missing_ok=True)
        raise


def _blocked(out: Path) -> str | None:
    """ "F is not a directory" where a parent of `out` is a file: clearer than ENOTDIR."""
    blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    return f"{blocked} is not a directory" if blocked else None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


__all__ = ["MAX_JSON_DEPTH", "loads_json", "nesting_over", "read_text", "write_output"]
