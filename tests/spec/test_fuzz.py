"""Thousands of mutated specs through load + validate + plan: the only failure allowed is the
project's own InputError (exit 2) - never a traceback from deeper in the pipeline. (The same strategies through
preview: test_fuzz_preview.py.)"""

from __future__ import annotations

from typing import Any

from fuzzing import ORG, edited_text, mutated, rescaled
from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.load import resolve
from gpuinfra.report.build.stack import stack_report
from gpuinfra.spec import Organization, OrgDocument, YamlDocument, parse_stack
from gpuinfra.spec.yamlfile import parse_yaml
from gpuinfra.validators.checked import check
from helpers import STACKS
from hypothesis import HealthCheck, given, settings


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
    stack_report(checked.inputs, checked.plan, checked.findings, load_catalog())  # rendering must not crash either


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rescaled())
def test_rescaled_specs_plan_or_fail_cleanly(case: tuple[str, dict[str, Any]]) -> None:
    test_mutated_specs_fail_only_with_input_errors.hypothesis.inner_test(case)  # type: ignore[attr-defined]


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
    stack_report(checked.inputs, checked.plan, checked.findings, load_catalog())
