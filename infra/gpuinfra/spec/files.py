"""Bounded reading of every file a user names (stack, organization, usage, policy configuration, the JSON
documents `diff` and `cost` read), and the one safe way to write `--out`.

A review runner reads what a pull request produced, so every reader is bounded the same way: only regular
files (a FIFO blocks a reader forever, /dev/zero never ends), a size limit checked before and while reading,
UTF-8 required, JSON nesting checked before parsing (the parser recurses), and numbers finite and in range
(JSON has no NaN or infinity: RFC 8259 section 6; `1e400` overflows a double; numbers past 10^30 are refused
before any reaches a Decimal). Each refusal is an InputError (exit 2) naming the file and what to change."""

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
MAX_JSON_NUMBER = 1e30
"""Larger numbers are refused as they are parsed, before any becomes a Decimal. gpuinfra's own documents carry
training FLOP counts (4.2e23 for llm-train-onprem; published frontier runs are near 4e25), nothing larger."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def read_text(path: Path, what: str, max_bytes: int, hint: str) -> str:
    """The file's text: a regular file of at most `max_bytes`, in UTF-8."""
    data = read_bytes(path, what, max_bytes, hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError.single(
            f"{what} is not UTF-8 text (byte {exc.start})", file=path, line=line, hint="save the file as UTF-8"
        ) from None


def read_bytes(path: Path, what: str, max_bytes: int, hint: str) -> bytes:
    """The file's bytes: a regular file of at most `max_bytes`. Opened without blocking (O_NONBLOCK: opening a
    FIFO with no writer returns at once instead of waiting) and judged by what was opened (fstat), so a file
    swapped for a FIFO or a device between a check and the open is still refused; read at most `max_bytes` + 1,
    so a file that grows while read is bounded too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError.single(
            f"{what} not found", file=path, hint="check the path (and the link, if it is one)"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path; OSError: too long, a loop, no search
        raise InputError.single(f"cannot read {what}: {_reason(exc)}", file=path, hint=hint) from None
    try:
        info = os.fstat(fd)
        if not S_ISREG(info.st_mode):
            raise InputError.single(f"{what} is not a regular file", file=path, hint=hint)
        if info.st_size > max_bytes:
            raise InputError.single(
                f"{what} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit", file=path, hint=hint
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise InputError.single(f"cannot read {what}: {_reason(exc)}", file=path, hint=hint) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise InputError.single(f"{what} is over the {max_bytes:,}-byte limit", file=path, hint=hint)
    return data


def read_bytes_or_none(path: Path, max_bytes: int) -> bytes | None:
    """`read_bytes` for a file gpuinfra keeps for itself (a cache entry, a file hashed into a cache key): its
    bytes, or None for anything but a readable regular file within `max_bytes`, so a bad entry is a cache miss,
    never a hang or a failure."""
    try:
        return read_bytes(path, "the file", max_bytes, "")
    except InputError:
        return None


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
    if abs(value) > MAX_JSON_NUMBER:
        raise _NumberError(f"the number {text[:40]} is beyond {MAX_JSON_NUMBER:g}")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 31:  # checked on the text first: int() of a huge literal is itself slow
        raise _NumberError(f"the integer {text[:20]}... has {digits:,} digits")
    value = int(text)
    if abs(value) > MAX_JSON_NUMBER:
        raise _NumberError(f"the integer {text[:20]} is beyond {MAX_JSON_NUMBER:g}")
    return value


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
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)  # a lone surrogate (from an argument or a file name) is written escaped
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


__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_NUMBER",
    "loads_json",
    "nesting_over",
    "read_bytes",
    "read_bytes_or_none",
    "read_text",
    "write_output",
]
