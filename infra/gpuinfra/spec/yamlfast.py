"""The YAML reader's fast path: libyaml's events (ruamel's C parser) turned into the same plain values and field-path
-> line index as the round-trip path of spec/yamlfile.py, about twenty times sooner (0.5 ms against 10 ms for a
5 KB stack file). The round-trip parser is pure Python; it is what a user's first preview pays for every stack file of
the repository, and what the property tests pay for every example they draw.

It answers only where it gives exactly what the round-trip path gives (tests/spec/test_yaml_fast.py holds the two
equal over generated and hostile texts): YAML 1.2 core resolution by ruamel's own resolver, the same budgets. On
anything else (a tag, a directive, a merge key, a complex, duplicate or non-text key, a number written with `_`, a
timestamp with a time, a parse error, a limit reached, a character the two parsers read differently) it returns
None, and the round-trip path reads the text and gives its own answer or its own error, line and message.

libyaml parses without recursion; the nodes are built here from its events with an explicit stack (its own
composer recurses in C and overflows the C stack on a 100,000-deep `[[[...`: a crash, not an error)."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from gpuinfra.errors import FieldPath

try:
    from _ruamel_yaml import CParser
except ImportError:  # no compiled ruamel.yaml.clib for this platform: the round-trip path reads everything
    CParser = None

PLAIN_TOKEN = re.compile(r"[^\s#,\[\]{}]+")
"""A plain scalar as written, from its first character: where a number is checked for `_` (both paths)."""
READ_DIFFERENTLY = re.compile("[\t\x85\u2028\u2029\ufeff]")
"""Characters libyaml (YAML 1.1) and the round-trip parser (YAML 1.2) do not read alike: NEL and the Unicode line
and paragraph separators are line breaks to YAML 1.1 only, a byte-order mark moves libyaml's columns, and ruamel
refuses a tab where libyaml takes it as a space (`name:\tx`)."""
DOCUMENT_MARKER = re.compile(r"(?<=[\r\n])(?:---|\.\.\.)|\A\.\.\.")
"""A document marker past the first line: ruamel reads a `...` line as part of a block scalar before it, where
libyaml ends the document (a leading `---` they read alike)."""
RESOLVER = VersionedResolver(version=(1, 2))
"""The round-trip loader's resolver, at the version it reads a file without a `%YAML` directive."""
STR = "tag:yaml.org,2002:str"
DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")

_SCALAR, _SEQUENCE, _MAPPING, _DATE = 0, 1, 2, 3
"""Node kinds; a date is a scalar that is no name (the round-trip path refuses it as a key)."""


class Refused(Exception):
    """The fast path cannot promise the round-trip path's answer for this text."""


@dataclass(slots=True)
class Node:
    """A composed node: a scalar's plain value (resolved once, however many aliases name it), or a collection's
    children (a mapping's as key, value, key, value, ...), and where it starts (0-based, as the parser marks)."""

    kind: int
    value: Any
    line: int
    column: int
    number: bool = False
    """The round-trip constructor builds an int subclass or a float here (a number, or an anchored boolean):
    what its `_` check looks at."""
    size: int = 1
    """Values under it after alias expansion, itself included; 0 while a collection is open."""


def plain(text: str, max_values: int, max_depth: int) -> tuple[Any, dict[FieldPath, int]] | None:
    """(data, lines) as the round-trip path gives them, or None where only that path can answer."""
    if CParser is None or READ_DIFFERENTLY.search(text) or DOCUMENT_MARKER.search(text):
        return None
    try:
        root = compose(text, max_depth)
        lines: dict[FieldPath, int] = {(): 1}
        if root is None:
            return None, lines
        if root.size > max_values:
            return None
        data = _Converter(text, max_values, max_depth, lines).plain(root, ())
    except Exception:  # a parse error, an overlong number, Refused, ...: the round-trip path names it
        return None
    return data, lines


def compose(text: str, max_depth: int) -> Node | None:
    """The single document's root node (None for an empty stream), built from libyaml's events."""
    parser = CParser(text)
    parser.get_event()  # the stream's start
    event = parser.get_event()
    if type(event) is StreamEndEvent:
        return None
    if type(event) is not DocumentStartEvent or event.version is not None or event.tags:
        raise Refused("a directive")  # %YAML 1.1 changes how the round-trip path resolves
    root = _root(parser, max_depth)
    if type(parser.get_event()) is not DocumentEndEvent or type(parser.get_event()) is not StreamEndEvent:
        raise Refused("more than one document")
    return root


def _root(parser: Any, max_depth: int) -> Node:
    """Nodes from events with an explicit stack; depth counted as the round-trip composer counts it (every node
    open around this one, keys included, aliases not), refused past `max_depth` as it refuses. Each collection's
    size after alias expansion is summed as it closes, so a "billion laughs" is declined before any walk."""
    anchors: dict[str, Node] = {}
    open_: list[Node] = []
    while True:
        event = parser.get_event()
        kind = type(event)
        if kind is SequenceEndEvent or kind is MappingEndEvent:
            done = open_.pop()
            done.size = _expanded(done)
            if not open_:
                return done
            continue
        if kind is AliasEvent:
            node = anchors[event.anchor]  # KeyError: an undefined alias, the round-trip path's error
            if node.size == 0:
                raise Refused("an alias inside its own anchor")  # a recursive structure
        elif len(open_) >= max_depth:
            raise Refused("nested past the limit")
        elif kind is ScalarEvent:
            node = _scalar(event)
        elif kind is SequenceStartEvent or kind is MappingStartEvent:
            if event.tag is not None:
                raise Refused("a tag")
            mark = event.start_mark
            node = Node(_SEQUENCE if kind is SequenceStartEvent else _MAPPING, [], mark.line, mark.column, size=0)
        else:
            raise Refused(f"an unexpected event {kind.__name__}")
        if kind is not AliasEvent and event.anchor is not None:
            anchors[event.anchor] = node
        if open_:
            open_[-1].value.append(node)
        if kind is SequenceStartEvent or kind is MappingStartEvent:
            open_.append(node)
        elif not open_:
            return node


def _expanded(node: Node) -> int:
    """Values the conversion visits under `node`: itself and its items', or its values' (keys are not counted)."""
    children = node.value if node.kind == _SEQUENCE else node.value[1::2]
    return 1 + sum(child.size for child in children)


def _scalar(event: Any) -> Node:
    """A scalar's plain value, resolved by the round-trip loader's resolver and built as its constructor builds
    it (ruamel.yaml.constructor.RoundTripConstructor.construct_yaml_int, _float, _sbool, _null, _timestamp)."""
    if event.tag is not None:
        raise Refused("a tag")
    text: str = event.value
    tag = _tag(text, plain=event.implicit[0])
    mark = event.start_mark
    if tag == STR:
        return Node(_SCALAR, text, mark.line, mark.column)
    if tag == "tag:yaml.org,2002:null":
        return Node(_SCALAR, None, mark.line, mark.column)
    if tag == "tag:yaml.org,2002:bool":  # anchored, the constructor's ScalarBoolean: an int to the `_` check
        anchored = event.anchor is not None
        return Node(_SCALAR, SafeConstructor.bool_values[text.lower()], mark.line, mark.column, anchored)
    if tag == "tag:yaml.org,2002:int":
        return Node(_SCALAR, _int(text), mark.line, mark.column, True)
    if tag == "tag:yaml.org,2002:float":
        return Node(_SCALAR, _float(text), mark.line, mark.column, True)
    if tag == "tag:yaml.org,2002:timestamp" and (date := DATE.fullmatch(text)):
        return Node(_DATE, datetime.date(*map(int, date.groups())).isoformat(), mark.line, mark.column)
    raise Refused(f"a scalar resolved as {tag}")  # a timestamp with a time, `<<`, `=`


def _tag(text: str, plain: bool) -> str:
    """A quoted or block scalar is text, whatever it reads; a plain one is resolved, a short one through the cache
    (a long one is not kept: a repository of 4 MiB scalars would fill memory)."""
    if not plain:
        return STR
    return _resolved(text) if len(text) <= 64 else _resolve(text)


def _resolve(plain: str) -> str:
    """The tag the round-trip loader's resolver gives a plain scalar."""
    return str(RESOLVER.resolve(ScalarNode, plain, (True, False)))


_resolved = lru_cache(maxsize=4096)(_resolve)
"""The same, kept for short scalars: a repository's files repeat their words, and the resolver looks its version
up twice a call."""


def _int(text: str) -> int:
    """YAML 1.2's integers as the round-trip constructor reads them: 0b, 0x and 0o prefixes, else decimal (a
    leading zero is no octal in 1.2). More digits than int() converts raises ValueError, as there."""
    if "_" in text:
        raise Refused("a number with '_'")  # read as YAML 1.1 does, then refused in a field: the round-trip path's
    sign = -1 if text[0] == "-" else 1
    digits = text[1:] if text[0] in "+-" else text
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)


def _float(text: str) -> float:
    """YAML 1.2's floats as the round-trip constructor reads them: the sign applied last, `.inf` and `.nan` as its
    own values."""
    if "_" in text:
        raise Refused("a number with '_'")
    lowered = text.lower()
    sign = -1 if lowered[0] == "-" else 1
    digits = lowered[1:] if lowered[0] in "+-" else lowered
    if digits == ".inf":
        return sign * SafeConstructor.inf_value
    if digits == ".nan":
        return SafeConstructor.nan_value
    return sign * float(digits)


def deeper_than(text: str, limit: int) -> bool:
    """Whether libyaml's events nest collections past `limit`: asked before ruamel's C loader reads untrusted text
    (its composer recurses in C, and a 100,000-deep file overflows the C stack: a crash, not an error). Text libyaml
    cannot read answers False, and the loader raises its own error where the events stopped, no deeper."""
    if CParser is None:
        return False
    parser, depth = CParser(text), 0
    try:
        while True:
            kind = type(parser.get_event())
            if kind is SequenceStartEvent or kind is MappingStartEvent:
                depth += 1
                if depth > limit:
                    return True
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                depth -= 1
            elif kind is StreamEndEvent:
                return False
    except Exception:  # a parse error, a character it refuses
        return False


def underscored(source: list[str], line: int, column: int) -> str | None:
    """The plain token written at (line, column) when it holds `_` (`1_6`): YAML 1.2's core schema reads it as
    text where ruamel reads a number, so a field holding one is refused (spec/yamlfile.py)."""
    if not 0 <= line < len(source):
        return None
    match = PLAIN_TOKEN.match(source[line], column)
    return match.group() if match and "_" in match.group() else None


class _Converter:
    """Nodes to plain values, recording each key's and item's line, as spec/yamlfile.py `_plain` does: the same
    order, the same budget (values after alias expansion, depth of the field path); refused where it refuses."""

    def __init__(self, text: str, max_values: int, max_depth: int, lines: dict[FieldPath, int]) -> None:
        self.text = text
        self.source: list[str] | None = None
        self.left = max_values
        self.max_depth = max_depth
        self.lines = lines

    def plain(self, node: Node, path: FieldPath) -> Any:
        self.left -= 1
        if self.left < 0 or len(path) > self.max_depth:
            raise Refused("a limit reached")
        if node.kind == _SCALAR or node.kind == _DATE:
            return node.value
        if node.kind == _SEQUENCE:
            items = []
            for index, item in enumerate(node.value):
                items.append(self._child(item, (*path, index), item.line))
            return items
        out: dict[Any, Any] = {}
        children = iter(node.value)
        for key, value in zip(children, children, strict=True):
            name = key.value
            if key.kind != _SCALAR or not isinstance(name, int | str) or isinstance(name, bool) or name in out:
                raise Refused("a key that is not a unique name")
            out[name] = self._child(value, (*path, name), key.line)
        return out

    def _child(self, node: Node, path: FieldPath, line: int) -> Any:
        self.lines[path] = line + 1
        if node.number:
            if self.source is None:
                self.source = self.text.splitlines()
            if underscored(self.source, node.line, node.column):
                raise Refused("a number written with '_'")
        return self.plain(node, path)


__all__ = ["deeper_than", "plain", "underscored"]
