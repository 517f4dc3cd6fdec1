"""NetworkPolicy evaluation (gpuinfra.preflight.netpol): the documented semantics on small cases, then the EKS
training namespace's policies as the example's graph creates them: the pruner (and a trainer) reach the Pod
Identity agent (169.254.170.23:80) and S3 (HTTPS), DNS and their own namespace's pods; nothing else (the instance
metadata service, SSH into the VPC, plain HTTP out, another namespace's pods)."""

from __future__ import annotations

from typing import Any

import pytest
from gpuinfra.preflight.netpol import Destination, egress_allowed, selects
from helpers import example_graph

NP = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def policy(spec: dict[str, Any], namespace: str = "ns") -> dict[str, Any]:
    return {"metadata": {"namespace": namespace}, "spec": spec}


def test_a_pod_no_policy_isolates_may_connect_anywhere() -> None:
    only_ingress = policy({"podSelector": {}, "policyTypes": ["Ingress"]})
    assert egress_allowed([only_ingress], "ns", {"app": "x"}, Destination(22, ip="10.0.0.1"))


def test_default_deny_then_additive_allows() -> None:
    deny = policy({"podSelector": {}, "policyTypes": ["Egress"]})
    web = policy({"podSelector": {"matchLabels": {"app": "web"}}, "egress": [{"ports": [{"port": 443}]}]})
    assert not egress_allowed([deny], "ns", {"app": "web"}, Destination(443, ip="1.2.3.4"))
    assert egress_allowed([deny, web], "ns", {"app": "web"}, Destination(443, ip="1.2.3.4"))
    assert not egress_allowed([deny, web], "ns", {"app": "db"}, Destination(443, ip="1.2.3.4"))
    assert not egress_allowed([deny, web], "ns", {"app": "web"}, Destination(443, protocol="UDP", ip="1.2.3.4"))


def test_ip_blocks_and_their_exceptions() -> None:
    rule = {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}], "ports": [{"port": 80}]}
    p = policy({"podSelector": {}, "policyTypes": ["Egress"], "egress": [rule]})
    assert egress_allowed([p], "ns", {}, Destination(80, ip="10.2.3.4"))
    assert not egress_allowed([p], "ns", {}, Destination(80, ip="10.1.3.4"))
    assert not egress_allowed([p], "ns", {}, Destination(80, pod_labels={}, namespace="ns"))  # a pod is not an IP


def test_selectors() -> None:
    assert selects({}, {"a": "b"})
    expr = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}
    assert selects(expr, {"tier": "gpu"}) and not selects(expr, {"tier": "cpu"}) and not selects(expr, {})
    assert selects({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, {"tier": "gpu"})


def _training(stack: str) -> tuple[list[dict[str, Any]], str, dict[str, str]]:
    graph = example_graph(stack)
    policies = [
        {"metadata": {"namespace": r.inputs["metadata"]["namespace"]}, "spec": r.inputs["spec"]}
        for r in graph.of_type(NP)
    ]
    (cronjob,) = [r for r in graph.of_type("kubernetes:batch/v1:CronJob") if r.name.endswith("-pruner")]
    template = cronjob.inputs["spec"]["jobTemplate"]["spec"]["template"]
    labels = (template.get("metadata") or {}).get("labels") or {}  # the policies select every pod of the namespace
    return policies, cronjob.inputs["metadata"]["namespace"], labels


ALLOWED = {
    "pod-identity-agent": Destination(80, ip="169.254.170.23"),
    "pod-identity-agent-ipv6": Destination(80, ip="fd00:ec2::23"),
    "s3-https": Destination(443, ip="52.216.8.11"),
    "dns": Destination(53, protocol="UDP", ip="172.20.0.10"),
    "a-trainer-pod": Destination(29500, pod_labels={"jobset.sigs.k8s.io/jobset-name": "x"}, namespace="training"),
}
DENIED = {
    "instance-metadata": Destination(80, ip="169.254.169.254"),
    "pod-identity-agent-other-port": Destination(2703, ip="169.254.170.23"),
    "ssh-into-the-vpc": Destination(22, ip="10.0.1.5"),
    "plain-http-out": Destination(80, ip="52.216.8.11"),
    "another-namespace": Destination(8080, pod_labels={}, namespace="kube-system"),
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_the_eks_pruner_reaches_what_it_needs(name: str) -> None:
    policies, namespace, labels = _training("llm-train-eks")
    assert namespace == "training"
    assert egress_allowed(policies, namespace, labels, ALLOWED[name])


@pytest.mark.parametrize("name", sorted(DENIED))
def test_and_nothing_else(name: str) -> None:
    policies, namespace, labels = _training("llm-train-eks")
    assert not egress_allowed(policies, namespace, labels, DENIED[name])


def test_on_premises_there_is_no_pod_identity_agent_to_reach() -> None:
    policies, namespace, labels = _training("llm-train-onprem")
    assert not egress_allowed(policies, namespace, labels, ALLOWED["pod-identity-agent"])
    assert egress_allowed(policies, namespace, labels, ALLOWED["s3-https"])
