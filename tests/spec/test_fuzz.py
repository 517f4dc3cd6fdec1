"""Thousands of mutated specs through load + validate + plan: the only failure allowed is the
project's own InputError (exit 2) - never a traceback from deeper in the pipeline."""

from __future__ import annotations

import copy
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.commands.preview import preview_checked
from gpuinfra.cost import Usage
from gpuinfra.errors import InputError
from gpuinfra.load import resolve
from gpuinfra.policy.pack import pack_config
from gpuinfra.report.build.stack import stack_report
from gpuinfra.spec import Organization, OrgDocument, YamlDocument, parse_stack
from gpuinfra.spec.yamlfile import parse_yaml
from gpuinfra.validators.checked import check
from helpers import STACKS, example_data, field_paths, org_data
from hypothesis import HealthCheck, given, settings
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
    name = draw(st.sampled_from(sorted(EXAMPLES)))
    data = copy.deepcopy(EXAMPLES[name])
    targets = field_paths(data["config"])
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(targets))
        node: Any = data["config"]
        for key in path[:-1]:
            node = child(node, key)
        last = path[-1]
        action = draw(st.sampled_from(["set", "delete", "add"]))
        if isinstance(node, dict):
            if action == "delete":
                node.pop(last, None)
            elif action == "add":
                node[draw(st.text(min_size=1, max_size=10))] = draw(values)
            else:
                node[last] = draw(values)
        elif child(node, last) is not None or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
            node[last] = draw(values)
    return name, data


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_specs_fail_only_with_input_errors(case: tuple[str, dict[str, Any]]) -> None:
    name, data = case
    catalog = load_catalog()
    org = OrgDocument(org=Organization.model_validate(ORG), doc=YamlDocument(path=STACKS / "org.yaml", data={}))
    try:
        stack = parse_stack(YamlDocument(path=STACKS / f"Pulumi.{name}.yaml", data=data))
        checked = check(resolve(stack, org, catalog), catalog)
    except InputError as exc:
        assert exc.problems and all(p.message for p in exc.problems)
        return
    stack_report(checked.inputs, checked.plan, checked.findings)  # rendering the plan must not crash either


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
    name = draw(st.sampled_from(sorted(EXAMPLES)))
    data = copy.deepcopy(EXAMPLES[name])
    targets = numeric_paths(data["config"])
    if not targets:
        return name, data
    for path in draw(st.lists(st.sampled_from(targets), min_size=1, max_size=5)):
        *head, last = path
        parent = _at(data["config"], tuple(head))
        factor = draw(st.sampled_from([0.001, 0.1, 0.5, 0.9, 1.1, 2, 3, 10, 1000]))
        value = parent[last] * factor
        parent[last] = round(value) if isinstance(parent[last], int) else value
    return name, data


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rescaled())
def test_rescaled_specs_plan_or_fail_cleanly(case: tuple[str, dict[str, Any]]) -> None:
    test_mutated_specs_fail_only_with_input_errors.hypothesis.inner_test(case)  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rescaled())
def test_rescaled_specs_that_validate_also_preview(case: tuple[str, dict[str, Any]]) -> None:
    """What validate passes, preview builds: the program, cost and the policy pack run without an exception,
    and the program never fails on an input the validators accepted (a `pulumi-program` finding)."""
    name, data = case
    catalog = load_catalog()
    org = OrgDocument(org=Organization.model_validate(ORG), doc=YamlDocument(path=STACKS / "org.yaml", data={}))
    try:
        stack_doc = parse_stack(YamlDocument(path=STACKS / f"Pulumi.{name}.yaml", data=data))
        checked = check(resolve(stack_doc, org, catalog), catalog)
    except InputError:
        return
    stack, _ = preview_checked(checked, Usage(), POLICIES)
    PREVIEWED.append(stack.resources is not None)
    assert not [f for f in stack.findings if f.rule == "pulumi-program"], [f.message for f in stack.findings]


POLICIES = pack_config()
PREVIEWED: list[bool] = []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_specs_that_validate_also_preview(case: tuple[str, dict[str, Any]]) -> None:
    """Mutations that get past validation (a changed name, a dropped optional section) run through preview:
    the program, cost and the pack, with no exception and no pulumi-program finding."""
    test_rescaled_specs_that_validate_also_preview.hypothesis.inner_test(case)  # type: ignore[attr-defined]


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


@st.composite
def edited_text(draw: st.DrawFn) -> tuple[str, str]:
    """An example stack file with a few YAML-significant characters inserted, deleted or replaced."""
    name = draw(st.sampled_from(sorted(TEXTS)))
    text = TEXTS[name]
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(st.one_of(YAML_BITS, st.text(max_size=3))) + text[at + cut :]
    return name, text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_text())
def test_edited_yaml_text_fails_only_with_input_errors(case: tuple[str, str]) -> None:
    """Character-level edits of the example files, through the YAML reader, the schema, the references and
    the validators: any failure is the project's InputError, whose problems each name the file."""
    name, text = case
    path = STACKS / f"Pulumi.{name}.yaml"
    catalog = load_catalog()
    org = OrgDocument(org=Organization.model_validate(ORG), doc=YamlDocument(path=STACKS / "org.yaml", data={}))
    try:
        stack = parse_stack(parse_yaml(text, path))
        checked = check(resolve(stack, org, catalog), catalog)
    except InputError as exc:
        assert exc.problems and all(p.message and p.file == path for p in exc.problems)
        assert all(p.hint for p in exc.problems), exc.render()
        return
    stack_report(checked.inputs, checked.plan, checked.findings)
