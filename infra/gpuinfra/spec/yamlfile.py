"""Read YAML into plain Python values while remembering the line of every key and item.

Bounded, because a pull request's stack file is untrusted input to the review runner: only regular files
(a FIFO would block the reader forever), at most MAX_BYTES, at most MAX_VALUES values after alias expansion
(a 300-byte "billion laughs" file otherwise expands to gigabytes) and MAX_DEPTH levels of nesting. Each limit
is an input error (exit 2) that names it."""

from __future__ import annotations

import contextlib
import datetime
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import (
    CommentedKeyMap,
    CommentedKeySeq,
    CommentedMap,
    CommentedSeq,
    CommentedSet,
    TaggedScalar,
)
from ruamel.yaml.composer import MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarbool import ScalarBoolean

from gpuinfra.errors import FieldPath, InputError, Problem
from gpuinfra.spec.files import read_text
from gpuinfra.spec.yamlfast import plain as fast_plain
from gpuinfra.spec.yamlfast import underscored

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
    runs in-process read the same organization file, and parsing (round-trip wherever the fast path declines)
    is a step of every small preview. The cache holds a repository's every stack file (the quota and budget
    ledgers and the access flows read each stack's siblings: with fewer entries than files, reading them in turn
    missed every time).
    Callers must not mutate `data` (copy it first)."""
    try:
        stat = path.stat()
        resolved = path.resolve()
    except (OSError, RuntimeError):  # read_text names what is wrong (missing, a loop, no permission)
        return parse_yaml(read_text(path, what, MAX_BYTES, HINT), path)
    try:
        doc = _read_cached(resolved, stat.st_size, stat.st_mtime_ns, what)
    except InputError:  # read again to name the file as this caller names it
        return parse_yaml(read_text(path, what, MAX_BYTES, HINT), path)
    return doc if doc.path == path else replace(doc, path=path)


HINT = "give the path of a readable YAML file (a regular file, UTF-8, at most 4 MiB; split a larger one up)"


@lru_cache(maxsize=2048)
def _read_cached(resolved: Path, size: int, mtime_ns: int, what: str) -> YamlDocument:
    """The bounded read every input file gets (spec/files.read_text), then the parse; one entry per file,
    however callers name it (relative or resolved). Across processes the parse is kept by content
    (`_compiled`): a stack's preview reads every other stack of its repository (the ledgers, the access flows),
    and round-trip parsing them again in each fresh process cost 15 ms a file, seconds in a large repository."""
    text = read_text(resolved, what, MAX_BYTES, HINT)
    data, lines = _compiled(text, resolved)
    return YamlDocument(path=resolved, data=data, lines=lines)


def _compiled(text: str, path: Path) -> tuple[Any, dict[FieldPath, int]]:
    """(data, lines) of `text`, from gpuinfra.store.disk when a sound entry exists for exactly this text, this
    module's code and the parser's version (what a parse depends on); else parsed and stored. A text that does
    not parse raises here, as `parse_yaml` does, and nothing is stored."""
    import hashlib

    import ruamel.yaml

    from gpuinfra.store.disk import cached

    key = f"yaml-plain-2|{ruamel.yaml.__version__}|{_own_code()}|{hashlib.sha256(text.encode()).hexdigest()}"
    found = cached(key, lambda: _as_stored(parse_yaml(text, path)))
    return found[0], {tuple(k): v for k, v in found[1]}


def plain_data(text: str, path: Path) -> Any:
    """The data of a YAML text as `read_yaml` gives it, kept by content like every file it reads (for a quick
    look at a file already read as bytes); raises InputError as `parse_yaml` does."""
    return _compiled(text, path)[0]


def _as_stored(doc: YamlDocument) -> tuple[Any, list[tuple[FieldPath, int]]]:
    return doc.data, list(doc.lines.items())


@lru_cache(maxsize=1)
def _own_code() -> str:
    """This module's code and its fast path's: a parse depends on both."""
    import hashlib

    code = Path(__file__).read_bytes() + Path(__file__).with_name("yamlfast.py").read_bytes()
    return hashlib.sha256(code).hexdigest()


def parse_yaml(text: str, path: Path) -> YamlDocument:
    """Plain data and lines from libyaml's events (spec/yamlfast.py) where that path gives exactly the round-trip
    path's answer; the round-trip parse otherwise, which names every error by line (the fast path has none)."""
    fast = fast_plain(text, MAX_VALUES, MAX_DEPTH)
    if fast is not None:
        return YamlDocument(path=path, data=fast[0], lines=fast[1])
    return _round_trip(text, path)


def _round_trip(text: str, path: Path) -> YamlDocument:
    yaml = YAML(typ="rt", pure=True)
    yaml.max_depth = MAX_DEPTH  # the composer refuses deeper nesting at its line, before recursing into it
    try:
        raw = yaml.load(text)
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise InputError.single(
            f"YAML nested deeper than {MAX_DEPTH} levels",
            file=path,
            line=mark.line + 1 if mark is not None else None,
            hint="a stack or organization file needs a handful of levels: flatten the structure",
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = exc.problem or exc.context or "invalid YAML"
        raise InputError.single(
            f"YAML syntax error: {reason}", file=path, line=line, hint="fix the YAML at that line"
        ) from None
    except ReaderError as exc:  # a character YAML does not allow (control characters, NUL)
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        raise InputError.single(
            f"YAML cannot hold character {exc.character!r} ({exc.reason})",
            file=path,
            line=line,
            hint="remove it: a YAML file is printable UTF-8 text",
        ) from None
    except YAMLError as exc:
        raise InputError.single(f"YAML error: {str(exc)[:200]}", file=path, line=1, hint="fix the YAML") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
            raise _overlong_number(text, path) from None
        # ruamel's constructor fails outside its error type on some valid YAML it cannot build, e.g. a mapping
        # used as a mapping key ("unhashable type"): refuse it as input, the way a syntax error is
        raise InputError.single(
            f"YAML that cannot be read as plain data ({type(exc).__name__}: {str(exc)[:80]})",
            file=path,
            line=1,
            hint="write plain mappings with text keys, lists and scalars (no ? complex keys or tags)",
        ) from None
    except RecursionError:
        raise InputError.single(
            "YAML nested deeper than the parser can follow",
            file=path,
            line=1,
            hint=f"gpuinfra reads at most {MAX_DEPTH} levels: flatten the structure",
        ) from None
    lines: dict[FieldPath, int] = {(): 1}
    budget = _Budget(path, text.splitlines())
    data = _plain(raw, (), lines, budget)
    return YamlDocument(path=path, data=data, lines=lines)


def _overlong_number(text: str, path: Path) -> InputError:
    """An integer Python refuses to convert (more digits than sys.get_int_max_str_digits, 4,300 by default),
    at the line where it is written: no field takes one, and the parser's own message names neither."""
    found = re.search(r"(?<![\w.])[-+]?\d[\d_]{4299,}", text)
    line = text.count("\n", 0, found.start()) + 1 if found else None
    return InputError.single(
        "a number of more than 4,300 digits", file=path, line=line, hint="write the value the field asks for"
    )


@dataclass
class _Budget:
    """Values left to convert: aliases are expanded by the conversion, so this bounds what they expand to."""

    path: Path
    source: list[str] = field(default_factory=list)
    """The file's lines, to read a number as it was written."""
    left: int = MAX_VALUES

    def spend(self, path: FieldPath, lines: dict[FieldPath, int]) -> None:
        self.left -= 1
        line = next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), None)
        if self.left < 0:
            raise InputError.single(
                f"the YAML expands to more than {MAX_VALUES:,} values (through anchors and aliases?)",
                file=self.path,
                line=line,
                hint="write the values out, or use fewer aliases",
            )
        if len(path) > MAX_DEPTH:
            raise InputError.single(
                f"YAML nested deeper than {MAX_DEPTH} levels (through aliases?)",
                file=self.path,
                line=line,
                hint="flatten the structure",
            )


def _plain(node: Any, path: FieldPath, lines: dict[FieldPath, int], budget: _Budget) -> Any:
    """Convert ruamel's round-trip nodes to plain values, recording each child's line."""
    budget.spend(path, lines)
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            if not isinstance(key, int | str) or isinstance(key, bool):
                line = lines.get(path)
                with contextlib.suppress(KeyError, TypeError):
                    line = node.lc.key(key)[0] + 1
                raise InputError.single(
                    f"a mapping key here is {_kind(key)}, not a name",
                    file=budget.path,
                    line=line,
                    path=path,
                    hint="write keys as plain text (quote them if YAML reads them as something else)",
                )
            name = key
            child = (*path, name)
            with contextlib.suppress(KeyError, TypeError):
                lines[child] = node.lc.key(key)[0] + 1
            with contextlib.suppress(KeyError, TypeError, AttributeError):
                _written_as_yaml12(value, node.lc.value(key), child, budget)
            out[name] = _plain(value, child, lines, budget)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            with contextlib.suppress(KeyError, TypeError, IndexError):
                lines[child] = node.lc.item(index)[0] + 1
            with contextlib.suppress(KeyError, TypeError, IndexError, AttributeError):
                _written_as_yaml12(value, node.lc.item(index), child, budget)
            items.append(_plain(value, child, lines, budget))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, ScalarBoolean):  # an anchored boolean: an int subclass in ruamel
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime.date):
        return node.isoformat()
    raise InputError.single(
        f"unsupported YAML here: {_kind(node)}",
        file=budget.path,
        line=lines.get(path),
        path=path,
        hint="write a plain value, list or mapping (remove the ! tag)",
    )


def _written_as_yaml12(value: Any, where: tuple[int, int], path: FieldPath, budget: _Budget) -> None:
    """Refuse a number written with `_` (`1_6`): ruamel reads it as 16, YAML 1.1's way, while YAML 1.2's core
    schema (yaml.org/spec/1.2.2, 10.3.2 "Tag Resolution") has no `_` in numbers and reads it as text. Stack
    files are read by Pulumi's Go YAML reader too: a value two readers see differently is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    line, column = where
    written = underscored(budget.source, line, column)
    if written:
        raise InputError.single(
            f"the number {written} is written with '_', which YAML 1.2 reads as text",
            file=budget.path,
            line=line + 1,
            path=path,
            hint=f"write {written.replace('_', '')}",
        )


def _kind(value: Any) -> str:
    """What an unsupported YAML value is, in YAML's words (never a Python repr)."""
    if isinstance(value, TaggedScalar):
        return f"a value tagged {value.tag.value}" if value.tag and value.tag.value else "a tagged value"
    if isinstance(value, set | CommentedSet):
        return "a set (!!set)"
    if isinstance(value, bytes):
        return "binary data (!!binary)"
    if isinstance(value, CommentedKeySeq | CommentedKeyMap | list | dict):
        return "a list or mapping"
    if isinstance(value, bool) or value is None:
        return "a boolean or null"
    if isinstance(value, datetime.date):
        return "a date"
    if isinstance(value, float):
        return "a number"
    return "a value of an unsupported kind"


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_VALUES", "YamlDocument", "parse_yaml", "plain_data", "read_yaml"]
