"""Every accelerated instance family in the catalog, through the program and preflight: the llm-train example
on each training family's largest type, the chat-serve example on each serving family's largest type. Each
either builds a graph preflight finds nothing to refuse in, or the validators refuse it by name before any
resource is made (the program raises their findings, as under `pulumi up`): never a graph AWS would reject.
"""

from __future__ import annotations

import pulumi
import pytest
from gpuinfra.catalog import InstanceType, load_catalog
from gpuinfra.preflight import preflight
from gpuinfra.pulumi.engine.run import EngineError
from helpers import ample_quotas, graph_for

CATALOG = load_catalog()


def _largest(role: str) -> list[InstanceType]:
    out = []
    for family in (f.family for f in CATALOG.families if f.role == role):
        types = [i for i in CATALOG.instance_types if i.family == family and i.is_accelerated]
        if types:
            out.append(max(types, key=lambda i: (i.accelerator_count, i.vcpu)))
    return out


TRAINING = _largest("training")
SERVING = _largest("serving")
FLEET = ("us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1")
"""chat-serve's regions: each is granted ample quotas (quota checks have their own tests)."""


def _grants(account: str, regions: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for region in regions:
        out |= ample_quotas(account, region)
    return out


def _case(info: InstanceType) -> tuple[str, dict[str, object], dict[str, int]]:
    """The example stack, spec mutations and grants that put `info` to work."""
    if info in TRAINING:
        spec: dict[str, object] = {"compute.instance_type": info.name, "compute.capacity": {"type": "on_demand"}}
        if not info.efa_interfaces:
            spec["interconnect"] = {"type": "none"}
        return "llm-train", spec, _grants("ml-training", ("us-east-1",))
    return (
        "chat-serve",
        {"instance": {"type": info.name}, "regions[3].instance_type": None},
        _grants("ml-inference", FLEET),
    )


def _errors_or_refusal(info: InstanceType) -> set[str]:
    stack, spec, grants = _case(info)
    try:
        graph = graph_for(stack, spec, grants)
    except (pulumi.RunError, EngineError) as exc:  # the engine wraps the program's RunError
        message = str(exc)
        assert "gpuinfra refuses to build this stack" in message, message  # a named refusal, not a crash
        return set()
    return {f"{f.rule} {f.name} {f.path}" for f in preflight(graph, CATALOG) if f.blocking}


def test_the_catalog_has_the_families_the_issue_names() -> None:
    assert {"p4d", "p5", "p5en", "p6-b200", "trn1"} <= {i.family for i in TRAINING}
    assert {"g5", "g6", "g6e", "inf2"} <= {i.family for i in SERVING}


@pytest.mark.parametrize("info", TRAINING + SERVING, ids=lambda i: i.name)
def test_every_accelerated_family_previews_clean_or_is_refused(info: InstanceType) -> None:
    assert _errors_or_refusal(info) == set()


def test_the_current_families_are_built_not_refused() -> None:
    """The refusal branch above must not hide the types users pick: these build (and pass preflight above)."""
    built = set()
    for info in TRAINING + SERVING:
        if info.family in {"p5", "p5en", "g5", "g6", "g6e"}:
            graph_for(*_case(info))  # raises pulumi.RunError on a refusal
            built.add(info.family)
    assert built == {"p5", "p5en", "g5", "g6", "g6e"}
