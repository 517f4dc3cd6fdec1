"""The YAML reader's fast path (spec/yamlfast.py) against its round-trip path (spec/yamlfile.py `_round_trip`): for
every text, either the fast path declines (and the round-trip path answers, as before) or both give the same data,
value for value and type for type, and the same field-path -> line index, in the same order. Texts: the example
files byte for byte, character-level edits of them (tests/fuzzing.py `edited_text`, with CRLF, CR, a byte-order
mark and tabs), generated documents full of what YAML 1.1 and 1.2 read differently, and generated data as three
emitters write it (quoting, escapes, long lines folded)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
from bad_inputs import ALIAS_BOMB
from fuzzing import edited_text, scalars
from gpuinfra.errors import InputError
from gpuinfra.spec import yamlfast
from gpuinfra.spec.yamlfile import MAX_DEPTH, MAX_VALUES, _round_trip, parse_yaml
from helpers import STACKS
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

HERE = Path("Pulumi.fuzz.yaml")
FILES = sorted(STACKS.rglob("*.yaml"))


def shape(value: Any) -> Any:
    """A value with its types spelled out, so 1 and 1.0 and True differ, floats compare by repr (nan, -0.0)
    and mappings by order. Keys compare as text or integer: the round-trip path may keep a key as ruamel's str or
    int subclass (an anchored key, `0x1F:`), which is that text or that integer."""
    if isinstance(value, dict):
        return ("map", [(("int" if isinstance(k, int) else "str"), k, shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [shape(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def agree(text: str) -> bool:
    """The property; True when the fast path answered (for the counts below)."""
    fast = yamlfast.plain(text, MAX_VALUES, MAX_DEPTH)
    if fast is None:
        return False
    try:
        slow = _round_trip(text, HERE)
    except InputError as exc:
        raise AssertionError(f"the fast path read what the round-trip path refuses: {exc.render()}") from None
    assert shape(fast[0]) == shape(slow.data)
    assert list(fast[1].items()) == list(slow.lines.items())
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(STACKS)))
def test_every_example_file_reads_alike_on_the_fast_path(path: Path) -> None:
    assert agree(path.read_text(encoding="utf-8")), "an example file fell back to the round-trip parser"


NEWLINES = st.sampled_from(["\n", "\n", "\r\n", "\r"])


@st.composite
def hostile_edit(draw: st.DrawFn) -> str:
    """An example file edited as test_fuzz.py edits it, then perhaps with other line ends, a byte-order mark, tabs
    for some indentation, a tab after some colons."""
    _, text = draw(EDITED)
    text = text.replace("\n", draw(NEWLINES)).replace("\n  ", "\n\t", draw(RARE)).replace(": ", ":\t", draw(RARE))
    return draw(PREFIXES) + text


EDITED = edited_text()
RARE = st.sampled_from([0, 0, 0, 0, 1, 3])
PREFIXES = st.sampled_from(["", "", "", "\ufeff", "%YAML 1.2\n---\n", "--- "])


SCALARS = [  # what YAML 1.1 and 1.2 read differently, quoted and plain, anchored and aliased: the fast path reads these
    *("yes", "no", "on", "off", "y", "n", "Yes", "ON", "true", "True", "FALSE", "tRUE"),
    *("0o17", "0O17", "012", "08", "0", "-0", "+1", "0x1F", "-0x1f", "0b101", "0b2", "9" * 30, "0x" + "f" * 40),
    *("1.5", "1.", ".5", "-.5", "1e308", "1e400", "1E5", "1.5e-3", "+1e5", ".inf", "-.Inf", "+.INF"),
    *(".nan", ".NaN", "-.nan", "nan", "~", "null", "Null", "NULL", "", "a b", "-x", "?x", "x:y", "12:30"),
    *("2026-01-01", "2026-1-1", "'quoted'", "'012'", '"1_0"', '"dq \\t \\u263a \\x41 \\/"', "'it''s'"),
    *("'two\n  lines'", "&a 5", "&a_1 7", "&b true", "&c x", "*a", "*b", "|\n  lit\n", "|-\n  lit\n"),
    *(">\n  folded\n  text\n\n  more\n", ">+\n  k\n\n", "# only a comment", "a # comment", "[]", "{}"),
    *("[1, [2, {a: 3}]]", "{a: 1, b: [x, y]}", "{? a: b}"),
]
DECLINED_SCALARS = [  # what it leaves to the round-trip path (a tag, `_`, a time, `<<`, `=`, an invalid date, ...)
    *("1_0", "_", "1__", "0x_1F", "1_0.5", "2026-02-30", "2026-01-01T10:00:00Z", "2001-12-14 21:59:43.10 -5"),
    *("!!str 5", "!!int '5'", "!x y", "! 5", "!!binary aGk=", "=", "<<", "*zz", '"a\\\nb"', "{1_0: z}"),
]
KEYS = ["a", "b", "name", "1", "-1", "012", "0x1F", "''", "'q'", '"1_0"', "&k a", "*k", "a b", "-x", "? a"]
DECLINED_KEYS = ["1_0", "1.5", "true", "&k true", "~", "<<", "=", "2026-01-01", "? [a, b]", "[a]", "{a: b}", "!!str 1"]


TREE = st.recursive(
    st.sampled_from(SCALARS * 6 + DECLINED_SCALARS),
    lambda inner: st.one_of(
        st.tuples(st.just("map"), st.lists(st.tuples(st.sampled_from(KEYS * 6 + DECLINED_KEYS), inner), max_size=4)),
        st.tuples(st.just("seq"), st.lists(inner, max_size=4)),
        st.tuples(st.just("prop"), st.tuples(st.sampled_from(["&a", "&b", "&c", "!!map", "!!seq"]), inner)),
    ),
    max_leaves=12,
)
"""A document tree: scalars as written, mappings as (key, child) pairs, sequences, anchors and tags on some. One
strategy for every draw: hypothesis validates and caches a strategy once, not per example."""
HEADS = st.sampled_from(["", "", "", "", "---\n", "--- ", "%YAML 1.1\n---\n", "%TAG !e! tag:x,2026:\n---\n", "\ufeff"])
TAILS = st.sampled_from(["", "", "", "", "...\n", "---\nb: 2\n", "... # end\n"])


def render(node: Any, indent: int) -> list[str]:
    """Block YAML for a tree; a scalar's lines as written (a block scalar keeps its own indentation)."""
    pad = " " * indent
    if not isinstance(node, tuple):
        return [pad + line for line in node.split("\n")] if node else [pad + "''"]
    kind, body = node
    if kind == "prop":  # an anchor or a tag before a scalar on its line, or on its own line above a collection
        prop, inner = body
        rendered = render(inner, indent)
        return [pad + prop, *rendered] if isinstance(inner, tuple) else [pad + f"{prop} {rendered[0].strip()}"]
    if not body:
        return [pad + ("{}" if kind == "map" else "[]")]
    lines = []
    for item in body:
        key, child = item if kind == "map" else ("-", item)
        head = f"{pad}{key}:" if kind == "map" else f"{pad}-"
        if isinstance(child, tuple):
            lines += [head, *render(child, indent + 2)]
        else:
            first, *rest = child.split("\n")
            lines += [f"{head} {first}".rstrip(), *(" " * (indent + 2) + line for line in rest)]
    return lines


@st.composite
def generated(draw: st.DrawFn) -> str:
    """A generated document, perhaps with other line ends, a directive, a second document, a byte-order mark."""
    text = "\n".join(render(draw(TREE), 0)) + "\n"
    return (draw(HEADS) + text + draw(TAILS)).replace("\n", draw(NEWLINES))


HOSTILE_EDITS, GENERATED = hostile_edit(), generated()
DATA = st.recursive(
    scalars | st.text(max_size=120),  # text past the emitters' width: folded and continued lines
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=10,
)
"""tests/fuzzing.py's scalars (hostile text, NaN, infinities, large numbers) and long text, nested."""
EMITTERS = (YAML(), YAML(typ="safe", pure=False), YAML(typ="safe", pure=True))
"""ruamel's round-trip emitter (what the reader property tests write files with), libyaml's and ruamel's safe one."""
EMITTERS[1].default_flow_style = None  # leaf collections in flow style
ANSWERED = {"edited": 0, "generated": 0, "dumped": 0}
DRAWN = {"edited": 0, "generated": 0, "dumped": 0}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE_EDITS)
def test_edited_example_files_read_alike_or_fall_back(text: str) -> None:
    DRAWN["edited"] += 1
    ANSWERED["edited"] += agree(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GENERATED)
@example("a: &x [1, *x]\n")  # a recursive alias: both refuse at the depth limit
@example("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n")  # aliases expanded, lines from the anchored mapping
@example("- &a 1_0\n- &b_1 5\n- *b_1\n")  # `_` judged where the anchored value is written
def test_generated_documents_read_alike_or_fall_back(text: str) -> None:
    DRAWN["generated"] += 1
    ANSWERED["generated"] += agree(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DATA, st.sampled_from(range(len(EMITTERS))), st.integers(20, 100))
def test_emitted_documents_read_alike_or_fall_back(data: Any, emitter: int, width: int) -> None:
    yaml = EMITTERS[emitter]
    yaml.width = width
    written = io.StringIO()
    yaml.dump({"root": data}, written)
    DRAWN["dumped"] += 1
    ANSWERED["dumped"] += agree(written.getvalue())


def test_the_fast_path_answers_for_most_generated_texts() -> None:
    """Not a vacuous property: the fast path answered for a good share of the texts drawn above (the same
    worker runs this file's tests in order; counted only when both ran here)."""
    if not all(ANSWERED.values()):
        pytest.skip("the property tests above did not run in this process")
    assert all(ANSWERED[kind] >= DRAWN[kind] // 8 for kind in DRAWN), (ANSWERED, DRAWN)  # about 1 in 5 under CI
    assert ANSWERED["dumped"] >= DRAWN["dumped"] * 9 // 10, (ANSWERED, DRAWN)  # what an emitter writes it reads


ALIKE = {
    "YAML 1.2 words": "a: yes\nb: on\nc: 0o17\nd: 012\ne: ~\nf: .inf\ng: -.Inf\nh: 2026-01-01\n",
    "quoted numbers stay text": "a: '012'\nb: \"1_0\"\nc: 'true'\n",
    "anchors and aliases": "base: &b {x: 1, y: [2, 3]}\nuse: *b\nlist: [*b, *b]\n",
    "anchored scalars": "a: &n 5\nb: *n\nc: &t true\nd: *t\n",
    "CRLF": "a: 1\r\nb:\r\n  - x\r\n  - 'y'\r\n",
    "block scalars": "a: |\n  one\n  two\nb: >-\n  folded\n  line\n",
    "integer keys": "1: a\n0x1F: b\n012: c\n",
    "a leading document marker": "--- # the stack\na: 1\n",
}
DECLINED = {
    "a tag": "a: !!str 5\n",
    "a merge key": "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n",
    "a directive": "%YAML 1.1\n---\na: yes\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "a number with _": "a: 1_0\n",
    "a timestamp": "a: 2026-01-01T10:00:00Z\n",
    "a duplicate key": "a: 1\na: 2\n",
    "a complex key": "? [a, b]\n: c\n",
    "a boolean key": "true: a\n",
    "a byte-order mark": "\ufeffa: 1\n",
    "a line separator": "a: x\u2028y\n",
    "a tab after a colon": "a:\t1\n",
    "a document end after a block scalar": "a: |\n  x\n...\n",
    "an undefined alias": "a: *nowhere\n",
    "a syntax error": "a: [1, 2\n",
    "an overlong number": "a: " + "9" * 4301 + "\n",
    "nested past the limit": "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
}


@pytest.mark.parametrize("name", ALIKE)
def test_the_fast_path_answers_and_agrees(name: str) -> None:
    assert agree(ALIKE[name])


@pytest.mark.parametrize("name", DECLINED)
def test_the_fast_path_declines_what_only_the_round_trip_path_reads(name: str) -> None:
    """Declined, so the reader's answer is the round-trip path's: its data, or its error at the line."""
    text = DECLINED[name]
    assert yamlfast.plain(text, MAX_VALUES, MAX_DEPTH) is None
    try:
        parse_yaml(text, HERE)
    except InputError as exc:
        assert all(problem.line for problem in exc.problems), exc.render()


def test_an_alias_bomb_is_declined_before_any_walk() -> None:
    """Expanded sizes are summed as collections close: the fast path declines its 43 million values (9^8) without
    visiting them (the round-trip path's refusal of the same file is in the bad-inputs corpus, through validate and
    preview)."""
    assert yamlfast.plain(ALIAS_BOMB, MAX_VALUES, MAX_DEPTH) is None
    assert yamlfast.plain(ALIAS_BOMB.split("\nc:")[0] + "\n", MAX_VALUES, MAX_DEPTH) is not None  # 102 values


def test_a_deep_text_neither_crashes_nor_recurses() -> None:
    """libyaml's own composer recurses in C (a segfault at 100,000 levels); the fast path builds nodes with a
    stack of its own and declines past the limit, and the round-trip path refuses at its line."""
    text = "[" * 200_000 + "]" * 200_000
    assert yamlfast.plain(text, MAX_VALUES, MAX_DEPTH) is None
    with pytest.raises(InputError, match=f"deeper than {MAX_DEPTH}"):
        parse_yaml(text, HERE)


def test_nan_and_infinities_keep_their_sign() -> None:
    data = parse_yaml("a: .nan\nb: -.inf\nc: -0.0\n", HERE).data
    assert math.isnan(data["a"]) and data["b"] == -math.inf and math.copysign(1, data["c"]) == -1
