"""What validate passes, preview builds: mutated and rescaled specs through the program, cost and the policy pack.
Apart from test_fuzz.py's validate-level properties so the two files run on separate workers (`--dist loadfile`):
these previews are the slowest property tests."""

from __future__ import annotations

from typing import Any

from fuzzing import ORG, mutated, rescaled
from gpuinfra.catalog import load_catalog
from gpuinfra.commands.preview import preview_checked
from gpuinfra.cost import Usage
from gpuinfra.errors import InputError
from gpuinfra.load import resolve
from gpuinfra.policy.pack import pack_config
from gpuinfra.spec import Organization, OrgDocument, YamlDocument, parse_stack
from gpuinfra.validators.checked import check
from helpers import STACKS
from hypothesis import HealthCheck, given, settings


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
