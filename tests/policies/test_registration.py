"""Registration: every policy is discovered, well declared, and has a failing and a passing case built
from a real graph somewhere in tests/policies (found by reading the test modules)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from gpuinfra.policy import rules as policies
from gpuinfra.policy.rules.declare import ResourceRule
from helpers import sibling_test_modules
from policy_helpers import PolicyCase
from pulumi_policy import EnforcementLevel, StackValidationPolicy

RULES = Path(policies.__file__).parent
"""The rule modules (infra/gpuinfra/policy/rules/)."""
PACK = Path(__file__).resolve().parents[2] / "policies"
"""The pack directory `pulumi preview --policy-pack` loads."""
DOMAINS = ("separation", "quota", "budget", "training", "inference", "security", "unrecognised", "dataprep")
DENY_BY_DEFAULT = "unrecognised-resource"
"""The one resource policy that applies to every type: it refuses the types no other policy judges."""


def test_every_policy_has_a_failing_and_a_passing_case() -> None:
    cases: list[PolicyCase] = [c for m in sibling_test_modules(__file__) for c in getattr(m, "CASES", [])]
    both = {name for m in sibling_test_modules(__file__) for name in getattr(m, "COVERS", [])}
    names = {p.name for p in policies.POLICIES}
    failing = {c.policy for c in cases if c.fires} | both
    passing = {c.policy for c in cases if not c.fires} | both
    assert names - failing == set(), "policies without a failing case"
    assert names - passing == set(), "policies without a passing case"
    assert (failing | passing) - names == set(), "cases name policies that do not exist"


def test_every_policy_is_declared_completely() -> None:
    for policy in policies.POLICIES:
        assert re.fullmatch(f"({'|'.join(DOMAINS)})-[a-z0-9-]+", policy.name), policy.name
        assert policy.description.endswith(".") and len(policy.description) > 20, policy.name
        assert policy.enforcement_level in (EnforcementLevel.ADVISORY, EnforcementLevel.MANDATORY), policy.name
        for prop, schema in (policy.config_schema.properties if policy.config_schema else {}).items():
            assert "default" in schema and "type" in schema and "description" in schema, (policy.name, prop)
        if not isinstance(policy, StackValidationPolicy):
            assert isinstance(policy, ResourceRule), policy.name
            assert policy.resource_types or policy.type_prefix or policy.name == DENY_BY_DEFAULT, policy.name


def test_the_pack_discovers_every_domain_module() -> None:
    declared = {p.name.split("-")[0] for p in policies.POLICIES}
    assert declared == set(DOMAINS)
    modules = {p.stem for p in RULES.glob("*.py")}
    assert modules >= {"separation", "quotas", "budget", "training", "inference", "security"}
    assert {p.name for p in PACK.iterdir() if p.name != "__pycache__"} == {
        "PulumiPolicy.yaml",
        "__main__.py",
        "requirements.txt",
    }


def test_no_pack_module_shadows_the_standard_library() -> None:
    """__main__.py runs with policies/ first on sys.path: a module named like a stdlib one would replace it."""
    shadowing = {p.stem for p in PACK.glob("*.py")} & set(sys.stdlib_module_names)
    assert shadowing == set()


def test_main_only_builds_the_pack() -> None:
    body = ast.parse((PACK / "__main__.py").read_text()).body
    statements = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
    imports = [s for s in body if isinstance(s, ast.ImportFrom)]
    docstring, call = statements
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    assert [(i.module, [a.name for a in i.names]) for i in imports] == [("gpuinfra.workspace.pack", ["serve"])]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert isinstance(call.value.func, ast.Name) and call.value.func.id == "serve"


def test_the_readme_lists_every_policy_at_its_level() -> None:
    readme = (PACK.parent / "docs" / "policies.md").read_text()  # the README's policy table, moved into docs/
    for policy in policies.POLICIES:
        assert f"| `{policy.name}` | {policy.enforcement_level.value} |" in readme, policy.name
