"""Serving rules."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

CASES = [
    # 405B parameters in bf16 are 810 GB: more than the largest serving type holds (g6e.48xlarge, 8 x 48 GB L40S)
    Case("no-instance-fits", "chat-serve", {"model.parameters_billion": 405}, message="no instance holds"),
    Case("no-instance-fits", "chat-serve", fires=False),
    Case(
        "model-does-not-fit-instance",
        "chat-serve",
        {"regions[3].instance_type": "g4dn.xlarge"},
        message=r"g4dn.xlarge offers 15.5 GB but the model needs 20.3 GB .* in ap-northeast-1",
    ),
    Case("model-does-not-fit-instance", "chat-serve", fires=False),
    Case(
        "demand-exceeds-max",
        "chat-serve",
        {"regions[0].peak_rps": 100},
        message="us-east-1: peak needs 40 replicas but max_replicas is 12",
    ),
    Case("demand-exceeds-max", "chat-serve", fires=False),
    Case(
        "region-without-weights-replica",
        "chat-serve",
        {"regions[1].region": "eu-west-1", "regions[1].certificate_arn": None},
        message="no registry replica in eu-west-1",
    ),
    Case("region-without-weights-replica", "chat-serve", fires=False),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": None},
        message="us-east-1 has no certificate_arn for the HTTPS listener",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": "arn:aws:acm:us-west-2:222222222222:certificate/x"},
        message="certificate_arn is in us-west-2, not us-east-1",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": None, "load_balancer.type": "nlb"},
        message="us-east-1 has no certificate_arn for the TLS listener",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve-k8s",
        {"regions[1].certificate_arn": None},
        message="eu-central-1 has no certificate_arn for the load balancer Service",
    ),
    Case("endpoint-without-certificate", "chat-serve", fires=False),
    Case("scale-in-faster-than-scale-out", "chat-serve", {"autoscaling.scale_in_cooldown_seconds": 30}),
    Case("scale-in-faster-than-scale-out", "chat-serve", fires=False),
    Case(
        "training-class-instance",
        "chat-serve",
        {"regions[0].instance_type": "p5.48xlarge"},
        message="p5.48xlarge is a training-class instance",
    ),
    Case("training-class-instance", "chat-serve", fires=False),
    Case(
        "kubeconfig-per-region",
        "chat-serve",
        {"platform": "kubernetes", "kubernetes": {"kubeconfig_keys": {"us-east-1": "gpuinfra:kube-use1"}}},
        config={"gpuinfra:kube-use1": {"secure": "v1:abc"}},
        message="no kubeconfig key for us-west-2",
    ),
    Case("kubeconfig-per-region", "chat-serve", fires=False),
    Case(
        "accelerator-needs-load-balancers",
        "chat-serve-k8s",
        {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}},
        message="global_accelerator needs the fleet's own load balancers",
    ),
    Case("accelerator-needs-load-balancers", "chat-serve-k8s", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
