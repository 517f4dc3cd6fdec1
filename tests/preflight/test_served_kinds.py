"""The custom resources a Kubernetes serving stack creates are each tied to the cluster component serving them
(plan.cluster.SERVED_KINDS, which cluster-components-missing checks the declared versions against): here, each
tie is checked against the component's CRDs at its minimum release (../shared/upstream/k8s; Karpenter's, read at
aws/karpenter-provider-aws v1.14.1, in tests/components/test_kubernetes_nodes.py), and the preview is checked to
create no custom resource kind without one."""

from __future__ import annotations

import pytest
from gpuinfra.plan.cluster import KEDA_SCALED_OBJECT, POD_MONITOR, SERVED_KINDS, ServedKind
from helpers import example_graph
from ruamel.yaml import YAML
from upstream import UPSTREAM, require

BUILT_IN = {"core", "apps", "policy", "networking.k8s.io", "autoscaling", "rbac.authorization.k8s.io", "batch"}
CRD_FILES = {
    KEDA_SCALED_OBJECT: "keda-v{version}/keda.sh_scaledobjects.yaml",
    POD_MONITOR: "prometheus-operator-v{version}/monitoring.coreos.com_podmonitors.yaml",
}


@pytest.mark.parametrize("served", list(CRD_FILES), ids=lambda s: s.kind)
def test_the_component_serves_the_kind_at_its_minimum(served: ServedKind) -> None:
    path = require(UPSTREAM / "k8s" / CRD_FILES[served].format(version=served.minimum))
    crd = YAML(typ="safe", pure=True).load(path.read_text())
    group, version = served.api_version.split("/")
    assert crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == served.kind
    assert {v["name"]: v["served"] for v in crd["spec"]["versions"]}.get(version) is True


def test_every_custom_resource_the_stack_creates_has_a_serving_component() -> None:
    graph = example_graph("chat-serve-k8s")
    created = set()
    for resource in graph.resources:
        if not resource.type.startswith("kubernetes:") or resource.type.count(":") != 2:
            continue
        group_version, kind = resource.type.removeprefix("kubernetes:").split(":")
        group = group_version.split("/")[0]
        if group not in BUILT_IN and "/" in group_version:
            created.add((group_version, kind))
    tied = {(s.api_version, s.kind) for s in SERVED_KINDS}
    assert created, "the stack creates custom resources (PodMonitor, ScaledObject, NodePool, EC2NodeClass)"
    assert created <= tied, f"custom resources without a declared serving component: {created - tied}"
