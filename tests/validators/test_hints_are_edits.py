"""Hints that are edits: every finding the validator tables raise on the examples (tests/validators' CASES that
fire) has a hint, and every YAML snippet a hint gives (`key: value` in backticks) parses as YAML and is valid
input: no number written with thousands separators ("12,715" is refused by the spec), sizes the next valid one.
No hint is prose alone: each names, in backticks, the YAML to write, a field path of the stack or organization
schema, or a command. Spec errors for a missing section or a cross-field rule show the YAML to add."""

from __future__ import annotations

import re

import pytest
from gpuinfra.errors import InputError
from gpuinfra.spec.schema import org_schema, stack_schema
from helpers import DELETE, Case, checked, sibling_test_modules
from ruamel.yaml import YAML

SNIPPET = re.compile(r"`([A-Za-z_][\w.-]*: [^`]+)`")
SPAN = re.compile(r"`([^`]+)`")
FIELD_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\[[^\]]*\])?(?:\.[A-Za-z_][\w-]*(?:\[[^\]]*\])?)*")
COMMANDS = ("gpuinfra ", "pulumi ", "kubectl ", "helm ", "aws ", "vllm ", "docker ")
"""A backticked `key: value` in a hint: the YAML it tells the user to write."""
THOUSANDS = re.compile(r"\d,\d{3}")


def yaml_of(snippet: str) -> object:
    return YAML(typ="safe", pure=True).load(snippet)


def edits(hint: str) -> list[str]:
    return SNIPPET.findall(hint)


def schema_fields() -> set[str]:
    """Every property name of the stack and organization JSON Schemas (what `gpuinfra schema` writes)."""
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(stack_schema())
    walk(org_schema())
    return names


def actionable(hint: str, fields: set[str]) -> bool:
    """The hint names, in backticks, YAML to write (one key), a schema field path, or a command to run."""
    for span in SPAN.findall(hint):
        if span.startswith(COMMANDS):
            return True
        try:
            data = yaml_of(span)
        except Exception:  # not YAML: maybe a field path
            data = None
        if isinstance(data, dict) and len(data) == 1:
            return True
        if FIELD_PATH.fullmatch(span) and re.sub(r"\[[^\]]*\]", "", span).split(".")[-1] in fields:
            return True
    return False


def firing_cases() -> list[Case]:
    return [c for m in sibling_test_modules(__file__) for c in getattr(m, "CASES", []) if c.fires]


def test_every_hint_of_the_examples_findings_is_an_edit_that_parses() -> None:
    cases = firing_cases()
    assert len(cases) > 100
    snippets = 0
    for case in cases:
        for f in checked(case.stack, case.spec, case.org, config=case.config).findings:
            assert f.hint and "as the message says" not in f.hint, (f.rule, f.hint)
            for snippet in edits(f.hint):
                snippets += 1
                data = yaml_of(snippet)
                assert isinstance(data, dict) and len(data) == 1, (f.rule, snippet)
                assert not THOUSANDS.search(snippet), (f.rule, snippet)
    assert snippets > 50  # the hints with a value to write carry it as YAML


def test_no_hint_is_prose() -> None:
    """Every finding of the validator tables' firing cases says what to write where, or what to run: no "change the
    value as the message says", "make scale-in slower than scale-out" or "fix the spec instead"."""
    fields = schema_fields()
    assert {"node_count", "scale_in_cooldown_seconds", "kubernetes_version", "power_budget_kw"} <= fields
    prose: dict[str, str] = {}
    hints = 0
    for case in firing_cases():
        for f in checked(case.stack, case.spec, case.org, config=case.config).findings:
            hints += 1
            if not actionable(f.hint or "", fields):
                prose[f.rule] = f.hint or ""
    assert hints > 150 and not prose, prose
    assert not actionable("make scale-in slower than scale-out", fields)  # the checker catches prose
    assert not actionable("set `0` or at least `3`", fields)


def test_a_lustre_too_small_hint_gives_the_next_size_fsx_takes() -> None:
    # llm-train keeping 33 checkpoints needs 59,331 GiB (tests/validators/test_pcs.py). Its file system is
    # EFA-enabled at 250 MB/s/TiB, whose capacity comes in steps of 19,200 GiB (catalog services.yaml fsx_efa,
    # the example's own comment): ceil(59,331 / 19,200) = 4 steps = 76,800 GiB.
    (f,) = [f for f in checked("llm-train", {"checkpointing.keep_last": 33}).findings if f.rule == "lustre-too-small"]
    (snippet,) = edits(f.hint or "")
    assert yaml_of(snippet) == {"storage_capacity_gib": 76800}, f.hint


def test_a_host_ram_hint_names_the_next_size_of_the_family_that_serves() -> None:
    # 16 GB of bf16 weights need 16e9 / 0.75 = 21.3 GB (19.9 GiB) of host RAM (plan/serving.py HOST_RAM_SHARE):
    # g6.xlarge has 16 GiB, g6.2xlarge 32 GiB with the same one L4 (EC2 User Guide, accelerated computing
    # instance specifications), so the hint writes g6.2xlarge; fp8 halves the weights.
    found = checked("chat-serve", {"model.precision": "bf16", "instance.type": "g6.xlarge"}).findings
    f = next(f for f in found if f.rule == "host-ram-too-small")
    assert [yaml_of(s) for s in edits(f.hint or "")] == [{"type": "g6.2xlarge"}, {"precision": "fp8"}], f.hint


def test_a_duplicated_region_hint_sums_the_demand() -> None:
    found = checked("chat-serve", {"regions[1].region": "us-east-1"}).findings
    (f,) = [f for f in found if f.rule == "duplicate-region"]
    # us-east-1 peaks at 24 requests/s and us-west-2 (now a second us-east-1) at 14 (stacks/Pulumi.chat-serve.yaml)
    assert {"peak_rps": 38} in [yaml_of(s) for s in edits(f.hint or "")], f.hint


def test_checkpoint_interval_hint_is_the_optimum_to_write() -> None:
    before_t15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}  # 12 spot nodes
    found = [f for f in checked("llm-train", {"checkpointing.interval_minutes": 20, **before_t15}).findings]
    (f,) = [f for f in found if f.rule == "checkpoint-interval-off-optimum"]
    (snippet,) = edits(f.hint or "")
    value = yaml_of(snippet)["interval_minutes"]  # type: ignore[index]
    assert value == 157 and "the optimum is 157 min" in f.message  # tests/validators/test_checkpoints.py


@pytest.mark.parametrize(
    ("stack", "spec", "snippet"),
    [
        ("llm-train", {"availability_zone": DELETE}, {"availability_zone": "us-east-1a"}),
        (
            "chat-serve",
            {"model.kv_cache": DELETE},
            {"kv_cache": {"layers": "<int>", "kv_heads": "<int>", "head_dim": "<int>"}},
        ),
        ("chat-serve", {"global_routing.hosted_zone_id": DELETE}, {"hosted_zone_id": "Z0123456789ABCDEFGHIJ"}),
        # PERSISTENT_2 tiers 125, 250, 500, 1000 MB/s/TiB (FSx for Lustre API, PerUnitStorageThroughput): 300 -> 250
        ("llm-train", {"lustre.throughput_mb_s_per_tib": 300}, {"throughput_mb_s_per_tib": 250}),
        # the example's gang is on an ODCR (#48): on_demand with its capacity_reservation_id is refused
        ("llm-train", {"compute.capacity.type": "on_demand"}, {"type": "capacity_reservation"}),
        ("chat-serve", {"platform": "kubernetes"}, {"platform": "ec2"}),
        # 64 attention heads: the divisors nearest 7 are 8 (off by 1) and 4 (off by 3)
        ("llm-finetune", {"base_model.architecture.kv_heads": 7}, {"kv_heads": 8}),
        ("llm-train", {"compute.node_count": 0}, {"node_count": 1}),  # node_count: ge=1
    ],
)
def test_spec_errors_show_the_yaml_to_add(stack: str, spec: dict[str, object], snippet: dict[str, object]) -> None:
    with pytest.raises(InputError) as raised:
        checked(stack, spec)
    hints = [p.hint or "" for p in raised.value.problems]
    found = [yaml_of(s) for h in hints for s in edits(h)]
    assert any(snippet.items() <= (f or {}).items() for f in found if isinstance(f, dict)), hints
