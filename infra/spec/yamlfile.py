"""Read YAML into plain Python values while remembering the line of every key and item."""

from __future__ import annotations

import contextlib
import datetime
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from infra.errors import FieldPath, InputError, Problem


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
    except FileNotFoundError:
        raise InputError.single(f"{what} not found", file=path) from None
    except OSError as exc:
        raise InputError.single(f"cannot read {what}: {exc}", file=path) from None
    return _read_cached(path.resolve(), stat.st_size, stat.st_mtime_ns, path, what)


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
    lines: dict[FieldPath, int] = {(): 1}
    data = _plain(raw, (), lines)
    return YamlDocument(path=path, data=data, lines=lines)


def _plain(node: Any, path: FieldPath, lines: dict[FieldPath, int]) -> Any:
    """Convert ruamel's round-trip nodes to plain values, recording each child's line."""
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            child = (*path, key if isinstance(key, int | str) else str(key))
            with contextlib.suppress(KeyError, TypeError):
                lines[child] = node.lc.key(key)[0] + 1
            out[key if isinstance(key, str | int) else str(key)] = _plain(value, child, lines)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            with contextlib.suppress(KeyError, TypeError, IndexError):
                lines[child] = node.lc.item(index)[0] + 1
            items.append(_plain(value, child, lines))
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
    return node


__all__ = ["YamlDocument", "parse_yaml", "read_yaml"]
