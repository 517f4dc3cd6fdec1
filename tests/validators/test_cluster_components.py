"""cluster-components-missing: the AWS Load Balancer Controller, the Prometheus Operator (and the `release` its
Prometheus selects PodMonitors by), KEDA, GPU feature discovery, Karpenter, the pods' IAM trust and the API-key
Secret are each serving cluster's, declared in the organization file (clusters.<name>.components), like an
on-premises site's components (test_onprem_site.py). Minimums: LBC v2.3.0 (the first docs/guide/service/
annotations.md listing aws-load-balancer-attributes; v2.2.0's does not), KEDA 2.17.2 and Prometheus Operator
v0.93.0 (the CRDs in ../shared/upstream/k8s the stack's objects are checked against), Karpenter 1.14.1
(aws/karpenter-provider-aws at v1.14.1, pkg/apis/crds), nvidia-device-plugin 0.17.4 (the EKS user guide's GFD)."""

from __future__ import annotations

import pytest
from helpers import DELETE, Case, run_case

RULE = "cluster-components-missing"
STACK = "chat-serve-k8s"
EAST = "clusters.serve-us-east-1.components"
CASES = [
    Case(RULE, STACK, fires=False),
    Case(
        RULE,
        STACK,
        org={EAST: DELETE},
        message=r"cluster serve-us-east-1 \(us-east-1\) declares no serving components",
    ),
    Case(
        RULE, STACK, org={f"{EAST}.keda": DELETE}, message=r"no keda is declared: the stack creates keda\.sh/v1alpha1"
    ),
    Case(RULE, STACK, org={f"{EAST}.keda.version": "2.16.1"}, message=r"keda 2\.16\.1 is older than 2\.17\.2"),
    # Compared as numbers: 2.100.0 is newer than 2.17.2.
    Case(RULE, STACK, org={f"{EAST}.keda.version": "2.100.0"}, fires=False),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.prometheus_operator.version": "v0.80.0"},
        message=r"prometheus_operator v0\.80\.0 is older than 0\.93\.0",
    ),
    # The PodMonitor takes the cluster's release label; a stack that names another one is refused.
    Case(RULE, STACK, org={f"{EAST}.prometheus_operator.release": "kube-prometheus"}, fires=False),
    Case(
        RULE,
        STACK,
        spec={"kubernetes.prometheus_release": "prometheus"},
        org={f"{EAST}.prometheus_operator.release": "kube-prometheus"},
        message=r"selects PodMonitors labelled release=kube-prometheus; the fleet labels its PodMonitor "
        r"release=prometheus",
    ),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.aws_load_balancer_controller.version": "v2.2.0"},
        message=r"aws_load_balancer_controller v2\.2\.0 is older than 2\.3\.0",
    ),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.karpenter": DELETE},
        message=r"no karpenter is declared: the stack creates karpenter\.sh/v1 NodePool, karpenter\.k8s\.aws/v1 "
        "EC2NodeClass",
    ),
    Case(RULE, STACK, org={f"{EAST}.karpenter.version": "1.0.0"}, message=r"karpenter 1\.0\.0 is older than 1\.14\.1"),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.gpu_feature_discovery": DELETE},
        message=r"the pods select nodes by nvidia\.com/gpu\.product",
    ),
    Case(RULE, STACK, org={f"{EAST}.secrets": []}, message=r"no Secret chat/chat-k8s-api-key is declared"),
    # auth none: no key Secret is read, none is needed.
    Case(RULE, STACK, spec={"access.auth": "none"}, org={f"{EAST}.secrets": []}, fires=False),
    Case(RULE, STACK, org={f"{EAST}.workload_identity": DELETE}, message=r"no workload_identity is declared"),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.workload_identity.oidc_provider_arn": "arn:aws:iam::999999999999:oidc-provider/oidc.eks.x/id/A"},
        message=r"a role can trust only an OIDC provider of its own account",
    ),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.workload_identity": {"kind": "pod_identity"}},
        message=r"no workload_identity\.eks_cluster_name is declared",
    ),
    Case(
        RULE, STACK, org={f"{EAST}.workload_identity": {"kind": "pod_identity", "eks_cluster_name": "s"}}, fires=False
    ),
    # An unregistered cluster's components cannot be read: refused, not passed (the clusters policy says so too).
    Case(
        RULE,
        STACK,
        org={"clusters.serve-us-east-1": DELETE},
        message=r"us-east-1's kubeconfig key gpuinfra:kube-us-east-1 reaches no cluster registered",
    ),
    # HPA fleets create no ScaledObject: KEDA is not needed.
    Case(
        RULE,
        STACK,
        spec={"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"},
        org={f"{EAST}.keda": DELETE},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id + c.org.__repr__()[:40])
def test_cluster_components(case: Case) -> None:
    run_case(case)


def test_a_subnet_that_is_not_a_network_is_refused() -> None:
    from gpuinfra.spec.org import LoadBalancerControllerOnCluster
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"10\.80\.96\.1/24 is not an IPv4 network"):
        LoadBalancerControllerOnCluster.model_validate({"version": "v2.13.4", "subnet_cidrs": ["10.80.96.1/24"]})
