"""Read YAML into plain Python values while remembering the line of every key and item.

Bounded, because a pull request's stack file is untrusted input to the review runner: only regular files
(a FIFO would block the reader forever), at most MAX_BYTES, at most MAX_VALUES values after alias expansion
(a 300-byte "billion laughs" file otherwise expands to gigabytes) and MAX_DEPTH levels of nesting. Each limit
is an input error (exit 2) that names it."""

from __future__ import annotations

import contextlib
import datetime
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedKeyMap, CommentedKeySeq, CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from infra.errors import FieldPath, InputError, Problem

MAX_BYTES = 4 * 1024 * 1024
MAX_VALUES = 200_000
MAX_DEPTH = 64


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data as plain dicts/lists/scalars and a field-path -> line index."""

    path: Path
    data: Any
    lines: dict[FieldPath, int] = field(default_factory=dict)

    def line_of(self, path: FieldPath) -> int | None:
        """Line of the deepest known prefix of `path` (1-based), so errors land near their field."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None

    def problem(self, message: str, path: FieldPath = (), hint: str | None = None) -> Problem:
        return Problem(message, file=self.path, line=self.line_of(path), path=path, hint=hint)


def read_yaml(path: Path, what: str = "file") -> YamlDocument:
    """Parse `path`; a missing file or a syntax error becomes an InputError naming file and line.

    Parsed documents are cached by path, size and modification time: the CLI and the Pulumi program it
    runs in-process read the same organization file, and round-trip parsing is the slowest step of a
    small preview. Callers must not mutate `data` (copy it first)."""
    try:
        stat = path.stat()
        resolved = path.resolve()
    except FileNotFoundError:
        raise InputError.single(f"{what} not found", file=path) from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise InputError.single(f"cannot read {what}: {exc}", file=path) from None
    if not S_ISREG(stat.st_mode):
        raise InputError.single(f"{what} is not a regular file", file=path, hint="give the path of a YAML file")
    if stat.st_size > MAX_BYTES:
        raise InputError.single(
            f"{what} is {stat.st_size:,} bytes, over the {MAX_BYTES:,}-byte limit", file=path, hint="split it up"
        )
    return _read_cached(resolved, stat.st_size, stat.st_mtime_ns, path, what)


@lru_cache(maxsize=64)
def _read_cached(resolved: Path, size: int, mtime_ns: int, path: Path, what: str) -> YamlDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(f"cannot read {what}: {exc}", file=path) from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: Path) -> YamlDocument:
    yaml = YAML(typ="rt", pure=True)
    try:
        raw = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = exc.problem or exc.context or "invalid YAML"
        raise InputError.single(
            f"YAML syntax error: {reason}", file=path, line=line, hint="fix the YAML at that line"
        ) from None
    except YAMLError as exc:
        raise InputError.single(f"YAML error: {exc}", file=path) from None
    except RecursionError:
        raise InputError.single(
            "YAML nested deeper than the parser can follow", file=path, hint=f"gpuinfra reads {MAX_DEPTH} levels"
        ) from None
    lines: dict[FieldPath, int] = {(): 1}
    budget = _Budget(path)
    data = _plain(raw, (), lines, budget)
    return YamlDocument(path=path, data=data, lines=lines)


@dataclass
class _Budget:
    """Values left to convert: aliases are expanded by the conversion, so this bounds what they expand to."""

    path: Path
    left: int = MAX_VALUES

    def spend(self, path: FieldPath, lines: dict[FieldPath, int]) -> None:
        self.left -= 1
        if self.left < 0:
            raise InputError.single(
                f"the YAML expands to more than {MAX_VALUES:,} values (through anchors and aliases?)",
                file=self.path,
                hint="write the values out, or use fewer aliases",
            )
        if len(path) > MAX_DEPTH:
            line = next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), None)
            raise InputError.single(f"YAML nested deeper than {MAX_DEPTH} levels", file=self.path, line=line)


def _plain(node: Any, path: FieldPath, lines: dict[FieldPath, int], budget: _Budget) -> Any:
    """Convert ruamel's round-trip nodes to plain values, recording each child's line."""
    budget.spend(path, lines)
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            name = key if isinstance(key, int | str) else _scalar_text(key)
            child = (*path, name)
            with contextlib.suppress(KeyError, TypeError):
                lines[child] = node.lc.key(key)[0] + 1
            out[name] = _plain(value, child, lines, budget)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            with contextlib.suppress(KeyError, TypeError, IndexError):
                lines[child] = node.lc.item(index)[0] + 1
            items.append(_plain(value, child, lines, budget))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime.date):
        return node.isoformat()
    if isinstance(node, TaggedScalar | CommentedKeyMap | CommentedKeySeq | set):
        line = lines.get(path)
        where = f" (tag {node.tag.value})" if isinstance(node, TaggedScalar) and node.tag else ""
        raise InputError.single(
            f"unsupported YAML here{where}: write a plain scalar, list or mapping",
            file=budget.path,
            line=line,
            path=path,
        )
    return node


def _scalar_text(key: Any) -> str:
    """A mapping key that is not a plain string or number (a tagged scalar, a date, a complex key) as text."""
    value = getattr(key, "value", None)
    return str(value) if isinstance(value, str | int | float) else type(key).__name__


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_VALUES", "YamlDocument", "parse_yaml", "read_yaml"]
