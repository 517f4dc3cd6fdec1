"""Fuzzing strategies over the example stacks (tests/spec/test_fuzz.py, test_fuzz_preview.py, test_yaml_fast.py): a
spec with a few fields set, dropped or added anywhere (`mutated`), with its numbers rescaled (`rescaled`), or an
example file's text with a few YAML-significant characters edited in (`edited_text`)."""

from __future__ import annotations

import copy
from typing import Any

from helpers import STACKS, example_data, field_paths, org_data
from hypothesis import strategies as st

EXAMPLES = {name: example_data(name) for name in ("llm-train", "chat-serve", "model-registry")}
ORG = org_data()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**7),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["p5.48xlarge", "auto", "spot", "efa", "us-east-1", "L4", "s3://x/y/"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def child(node: Any, key: Any) -> Any:
    """node[key] when that exists (the tree changes under earlier mutations), else None."""
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(NAMES)
    data = copy.deepcopy(EXAMPLES[name])
    for _ in range(draw(EDIT_COUNTS)):
        path = draw(FIELDS[name])
        node: Any = data["config"]
        for key in path[:-1]:
            node = child(node, key)
        last = path[-1]
        action = draw(ACTIONS)
        if isinstance(node, dict):
            if action == "delete":
                node.pop(last, None)
            elif action == "add":
                node[draw(NEW_KEYS)] = draw(values)
            else:
                node[last] = draw(values)
        elif child(node, last) is not None or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
            node[last] = draw(values)
    return name, data


def numeric_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [
        p
        for p in field_paths(node, prefix)
        if isinstance(_at(node, p[len(prefix) :]), int | float) and not isinstance(_at(node, p[len(prefix) :]), bool)
    ]


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = child(node, key)
    return node


@st.composite
def rescaled(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """Numbers moved anywhere from a thousandth to a thousand times their example value: mostly
    valid specs, so planning and validation run on shapes nobody wrote by hand."""
    name = draw(NAMES)
    data = copy.deepcopy(EXAMPLES[name])
    if name not in NUMBERS:
        return name, data
    for path in draw(NUMBERS[name]):
        *head, last = path
        parent = _at(data["config"], tuple(head))
        factor = draw(FACTORS)
        value = parent[last] * factor
        parent[last] = round(value) if isinstance(parent[last], int) else value
    return name, data


# Strategies made once, not inside each draw, where hypothesis built and validated them again every time (drawing
# mutated's 2,500 examples: 6.5 s -> 5.5 s on a busy machine). The same strategies, so the same draws (checked under
# CI's derandomized seed: identical examples): an example's paths are its unedited file's, as the draws took them.
NAMES = st.sampled_from(sorted(EXAMPLES))
EDIT_COUNTS = st.integers(1, 4)
FIELDS = {name: st.sampled_from(field_paths(data["config"])) for name, data in EXAMPLES.items()}
ACTIONS = st.sampled_from(["set", "delete", "add"])
NEW_KEYS = st.text(min_size=1, max_size=10)
NUMBERS = {
    name: st.lists(st.sampled_from(paths), min_size=1, max_size=5)
    for name, data in EXAMPLES.items()
    if (paths := numeric_paths(data["config"]))
}
FACTORS = st.sampled_from([0.001, 0.1, 0.5, 0.9, 1.1, 2, 3, 10, 1000])


TEXTS = {name: (STACKS / f"Pulumi.{name}.yaml").read_text() for name in (*EXAMPLES, "llm-train-onprem")}
YAML_BITS = st.sampled_from(
    [
        ":",
        " ",
        "\n",
        "-",
        "&a ",
        "*a",
        "!!",
        "!x ",
        "[",
        "]",
        "{",
        "}",
        "'",
        '"',
        "#",
        "\t",
        "? ",
        ",",
        "|",
        ">",
        ".inf",
        "1e308",
        "0x1F",
        "~",
        "null",
        "true",
        "\x00",
        "\u2028",
        "\ufeff",
        "%YAML 1.1\n",
        "<<: *a\n",
    ]
)

TEXT_NAMES = st.sampled_from(sorted(TEXTS))
EDITS = st.one_of(YAML_BITS, st.text(max_size=3))
"""Which file, and what an edit inserts: one strategy each for every draw (made in each draw, hypothesis built and
validated it again each time)."""


@st.composite
def edited_text(draw: st.DrawFn) -> tuple[str, str]:
    """An example stack file with a few YAML-significant characters inserted, deleted or replaced."""
    name = draw(TEXT_NAMES)
    text = TEXTS[name]
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(EDITS) + text[at + cut :]
    return name, text
