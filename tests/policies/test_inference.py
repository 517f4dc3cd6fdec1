"""Inference policies on the example fleets (EC2 and Kubernetes), mutated."""

from __future__ import annotations

import pytest
from helpers import DELETE
from policy_helpers import PolicyCase, run_case

ASG = "aws:autoscaling/group:Group"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
TG = "aws:lb/targetGroup:TargetGroup"
PG = "aws:ec2/placementGroup:PlacementGroup"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"
ZONE_SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "chat-k8s"}},
    }
]
SPOT_ABOVE_ONE = {
    "mixedInstancesPolicy": {
        "instancesDistribution": {"onDemandBaseCapacity": 1, "onDemandPercentageAboveBaseCapacity": 0}
    }
}

INTERNET_FACING = {
    "service.beta.kubernetes.io/aws-load-balancer-type": "external",
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
}

HEALTH_CHECK = "aws:route53/healthCheck:HealthCheck"
PROBE_CHECK = {
    "type": "HTTPS",
    "fqdn": "internal-lb.example",
    "port": 443,
    "resourcePath": "/health",
    "cloudwatchAlarmName": DELETE,
    "cloudwatchAlarmRegion": DELETE,
    "insufficientDataHealthStatus": DELETE,
}
"""The check the review found (#7): an HTTPS probe, from Route 53's checkers outside the VPC."""
PRIVATE_EC2 = {"access.scheme": "internal", "access.client_cidrs": ["10.20.0.0/16"], "access.waf": None}

CASES = [
    PolicyCase("inference-private-failover", "chat-serve-k8s", fires=False),
    PolicyCase("inference-private-failover", "chat-serve", label="public fleet, HTTPS checks", fires=False),
    PolicyCase("inference-private-failover", "chat-serve", label="private fleet", spec=PRIVATE_EC2, fires=False),
    PolicyCase(
        "inference-private-failover",
        "chat-serve-k8s",
        edits=((HEALTH_CHECK, None, PROBE_CHECK),),
        message=r"chat-k8s-routing-us-east-1: health check chat-k8s-routing-us-east-1-health \(HTTPS\) probes "
        "chat-k8s-us-east-1-service, a private endpoint",
    ),
    PolicyCase(
        "inference-private-failover",
        "chat-serve",
        label="private fleet probed over HTTPS",
        spec=PRIVATE_EC2,
        edits=((HEALTH_CHECK, None, PROBE_CHECK),),
        message=r"chat-serve-routing-eu-central-1: .* probes chat-serve-eu-central-1-endpoint-lb, a private endpoint",
    ),
    PolicyCase("inference-protected-endpoint", "chat-serve", fires=False),
    PolicyCase("inference-protected-endpoint", "chat-serve-k8s", fires=False),
    PolicyCase(
        "inference-protected-endpoint",
        "chat-serve",
        spec={"access.waf": None},
        unchecked=True,
        message="chat-serve-us-east-1-endpoint-lb: internet-facing with no AWS WAF web ACL associated",
    ),
    PolicyCase(
        "inference-protected-endpoint",
        "chat-serve",
        spec={"access.auth": "none"},
        unchecked=True,
        message="chat-serve-us-east-1-endpoint-lb: internet-facing with no authentication",
    ),
    PolicyCase(
        "inference-protected-endpoint",
        "chat-serve",
        spec={"load_balancer.type": "nlb"},
        unchecked=True,
        message="an internet-facing network load balancer takes no WAF web ACL",
    ),
    PolicyCase(
        "inference-protected-endpoint",
        "chat-serve",
        label="private fleet",
        spec={"access": {"scheme": "internal", "auth": "none", "waf": None}},
        fires=False,
    ),
    PolicyCase(
        "inference-protected-endpoint",
        "chat-serve-k8s",
        edits=((SERVICE, None, {"metadata.annotations": INTERNET_FACING}),),
        message="an internet-facing Service load balancer \\(NLB\\) takes no WAF web ACL",
    ),
    PolicyCase("inference-on-demand-base", "chat-serve", fires=False),
    PolicyCase(
        "inference-on-demand-base",
        "chat-serve",
        edits=((ASG, "chat-serve-us-east-1-replicas-burst", {"minSize": 2}),),
        message="chat-serve-us-east-1-replicas-burst: minSize 2 but only 0 on-demand at that size; 2 always-on",
    ),
    PolicyCase(
        "inference-on-demand-base",
        "chat-serve",
        edits=((ASG, "chat-serve-us-east-1-replicas-base", {"minSize": 1}),),
        message=r"us-east-1: min_replicas is 2 but the groups keep 1 on-demand replica\(s\)",
    ),
    PolicyCase(
        "inference-on-demand-base",
        "chat-serve",
        edits=((ASG, "chat-serve-ap-northeast-1-replicas-base", SPOT_ABOVE_ONE),),
        message="chat-serve-ap-northeast-1-replicas-morning-floor raises "
        "chat-serve-ap-northeast-1-replicas-base to minSize 3, of which only 1 on-demand",
    ),
    PolicyCase("inference-on-demand-base", "chat-serve-k8s", fires=False),
    PolicyCase("inference-health-checks", "chat-serve", fires=False),
    PolicyCase("inference-health-checks", "chat-serve-k8s", fires=False),
    PolicyCase(
        "inference-health-checks",
        "chat-serve",
        edits=((TG, "chat-serve-us-west-2-endpoint-tg", {"healthCheck.enabled": False}),),
        message="chat-serve-us-west-2-endpoint-tg disables health checks",
    ),
    PolicyCase(
        "inference-health-checks",
        "chat-serve",
        edits=((ASG, "chat-serve-us-west-2-replicas-base", {"healthCheckType": "EC2"}),),
        message="chat-serve-us-west-2-replicas-base uses healthCheckType EC2; use ELB",
    ),
    PolicyCase(
        "inference-health-checks",
        "chat-serve-k8s",
        edits=((DEPLOYMENT, None, {"spec.template.spec.containers[0].readinessProbe": DELETE}),),
        message="container server serves without a readiness probe",
    ),
    PolicyCase(
        "inference-health-checks",
        "chat-serve-k8s",
        edits=((SERVICE, None, {"metadata.annotations": {}}),),
        message="load balancer without service.beta.kubernetes.io/aws-load-balancer-healthcheck-path",
    ),
    PolicyCase("inference-multi-zone", "chat-serve", fires=False),
    PolicyCase(
        "inference-multi-zone",
        "chat-serve",
        spec={"regions[1].availability_zones": ["us-west-2a"]},
        unchecked=True,
        message="us-west-2: replicas run in us-west-2a; one zone outage",
    ),
    PolicyCase(
        "inference-pod-zone-spread",
        "chat-serve-k8s",
        level="advisory",
        edits=((DEPLOYMENT, None, {"spec.template.spec.topologySpreadConstraints": []}),),
        message=r"chat-k8s-us-east-1-server: autoscaled replicas with no zone spread",
    ),
    PolicyCase("inference-pod-zone-spread", "chat-serve-k8s", fires=False),
    PolicyCase(
        "inference-pod-zone-spread",
        "chat-serve-k8s",
        label="spread set by hand",
        edits=((DEPLOYMENT, None, {"spec.template.spec.topologySpreadConstraints": ZONE_SPREAD}),),
        fires=False,
    ),
    PolicyCase("inference-no-training-hardware", "chat-serve", fires=False),
    PolicyCase(
        "inference-no-training-hardware",
        "chat-serve",
        level="advisory",
        edits=((LT, "chat-serve-us-east-1-replicas-lt", {"instanceType": "p4d.24xlarge"}),),
        message="p4d.24xlarge is training-class hardware",
    ),
    PolicyCase(
        "inference-no-training-hardware",
        "chat-serve",
        fires=False,
        label="allowed by config",
        edits=((LT, "chat-serve-us-east-1-replicas-lt", {"instanceType": "p4d.24xlarge"}),),
        config={"inference-no-training-hardware": {"allow_training_instances": True}},
    ),
    PolicyCase(
        "inference-no-training-hardware",
        "chat-serve",
        edits=(
            (
                LT,
                "chat-serve-us-east-1-replicas-lt",
                {"networkInterfaces": [{"interfaceType": "efa", "networkCardIndex": 0}]},
            ),
        ),
        message=r"1 EFA interface\(s\)",
    ),
    PolicyCase(
        "inference-no-training-hardware",
        "chat-serve",
        edits=((ASG, "chat-serve-us-east-1-replicas-base", {"placementGroup": "pg-1"}),),
        message="placement groups pack replicas onto one rack",
    ),
    PolicyCase(
        "inference-no-training-hardware",
        "chat-serve-k8s",
        edits=(
            (
                DEPLOYMENT,
                None,
                {"spec.template.spec.nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
            ),
        ),
        message="p5.48xlarge is training-class hardware",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_inference_policies(case: PolicyCase) -> None:
    run_case(case)
