"""One violation per documented rule and per Kubernetes kind, planted into a copy of a real example graph.

Expected limits come from the documents each rule cites (repeated in the case's comment)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds.aws.preflight import RULES
from gpuinfra.graph import Graph
from gpuinfra.preflight import preflight
from helpers import example_graph, graph_for
from planting import planted, removing, setting

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
GA_NLB = {
    "global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"},
    "load_balancer.type": "nlb",
    "access": {"scheme": "internal", "auth": "api_key", "waf": None},  # WAF takes no NLB: a private fleet
}


LT_TYPE = "aws:ec2/launchTemplate:LaunchTemplate"


def _index(graph: Graph, type_: str, name_part: str) -> int:
    return next(n for n, r in enumerate(graph.of_type(type_)) if name_part in r.name)


def _caught(graph: Graph, rule: str, name_part: str, path: str) -> None:
    findings = preflight(graph, load_catalog())
    hits = [f for f in findings if f.rule == rule and name_part in f.name and f.path == path]
    assert hits, f"{rule} at {path} not caught; found: {[(f.rule, f.name, f.path) for f in findings if f.blocking]}"


def _append_interface(inputs: dict[str, Any]) -> None:
    inputs["networkInterfaces"] = [{"interfaceType": "efa", "deviceIndex": 0, "networkCardIndex": 0}]


def _mixed(inputs: dict[str, Any]) -> None:
    inputs["mixedInstancesPolicy"] = {
        "instancesDistribution": {"onDemandBaseCapacity": 1},
        "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
    }


def _ownerless(inputs: dict[str, Any]) -> None:
    import json

    doc = json.loads(inputs["policy"])
    doc["Statement"] = [s for s in doc["Statement"] if s.get("Sid") != "Owner"]
    inputs["policy"] = json.dumps(doc)


def _two_targets(inputs: dict[str, Any]) -> None:
    inputs["routes"][0]["gatewayId"] = "igw-0123456789abcdef0"


def _bad_action(inputs: dict[str, Any]) -> None:
    inputs["policy"] = inputs["policy"].replace('"s3:GetObject"', '"s3 GetObject"', 1)


def _scratch(inputs: dict[str, Any]) -> None:
    inputs["deploymentType"] = "SCRATCH_1"
    inputs.pop("perUnitStorageThroughput")


# (stack or (stack, spec), type mutated, selector, mutation, rule, finding's resource name part, path)
CASES: list[tuple[Any, str, str, Any, str, str, str]] = [
    # p5.48xlarge has 32 network cards (catalog, karpenter VPC limits): index 40 does not exist
    (
        "llm-train",
        LT,
        "pcs-od-lt",
        setting("networkInterfaces[3].networkCardIndex", 40),
        "PF-EC2-NETCARD",
        "pcs-od-lt",
        "networkInterfaces[3].networkCardIndex",
    ),
    # g6e.xlarge has no EFA (EC2 User Guide, EFA supported instance types)
    (
        "chat-serve",
        LT,
        "ap-northeast-1",
        _append_interface,
        "PF-EC2-EFA",
        "ap-northeast-1-replicas-lt",
        "networkInterfaces[0].interfaceType",
    ),
    # hop limit 1..64 (LaunchTemplateInstanceMetadataOptionsRequest)
    (
        "chat-serve",
        LT,
        "",
        setting("metadataOptions.httpPutResponseHopLimit", 65),
        "PF-EC2-IMDS",
        "replicas-lt",
        "metadataOptions.httpPutResponseHopLimit",
    ),
    # EC2 user data: 16 KB before base64
    (
        "llm-train",
        LT_TYPE,
        "login",
        setting("userData", base64.b64encode(b"#!/bin/bash\n" + b"#" * 16_400).decode()),
        "PF-EC2-USERDATA",
        "login-lt",
        "userData",
    ),
    # CreateSecurityGroup: ASCII letters, digits and ._-:/()#,@[]+=&;{}!$* only
    (
        "llm-train",
        "aws:ec2/securityGroup:SecurityGroup",
        "",
        setting("description", "EFA — cluster"),
        "PF-EC2-SG-TEXT",
        "net-efa",
        "description",
    ),
    # CreateRoute: exactly one target
    ("llm-train", "aws:ec2/routeTable:RouteTable", "private", _two_targets, "PF-EC2-ROUTE", "private-rt", "routes[0]"),
    # CreateVpcEndpoint: SubnetIds for interface endpoints only
    (
        "llm-train",
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        "",
        setting("subnetIds", ["subnet-0123456789abcdef0"]),
        "PF-EC2-ENDPOINT",
        "net-s3",
        "subnetIds",
    ),
    # CreatePlacementGroup: PartitionCount with the partition strategy only
    (
        "llm-train",
        "aws:ec2/placementGroup:PlacementGroup",
        "",
        setting("partitionCount", 2),
        "PF-EC2-PLACEMENT",
        "slurm-pg",
        "partitionCount",
    ),
    # CreateAutoScalingGroup: desired 99 > max
    ("chat-serve", ASG, "base", setting("desiredCapacity", 99), "PF-ASG-SIZE", "base", "maxSize"),
    # PutScheduledUpdateGroupAction: min 20 > max 14 (the base's failover maximum, on demand)
    (
        "chat-serve",
        "aws:autoscaling/schedule:Schedule",
        "morning-floor",
        setting("minSize", 20),
        "PF-ASG-SIZE",
        "morning-floor",
        "maxSize",
    ),
    # NodegroupScalingConfig: min 5 > desired 4
    (
        "llm-train-eks",
        "aws:eks/nodeGroup:NodeGroup",
        "ondemand",
        setting("scalingConfig.minSize", 5),
        "PF-ASG-SIZE",
        "ondemand",
        "scalingConfig.desiredSize",
    ),
    # Warm pools: not with a mixed instances policy
    ("chat-serve", ASG, "base", _mixed, "PF-ASG-WARMPOOL", "base", "warmPool"),
    # RollbackInstanceRefresh: no rollback to a template whose ImageId is an SSM parameter (the example resolves
    # its pinned version to an AMI id at deploy, so its groups roll back: plant the parameter in the template)
    (
        "chat-serve",
        LT,
        "us-east-1-replicas-lt",
        setting("imageId", "resolve:ssm:/acme/serving/gpu-ami"),
        "PF-ASG-ROLLBACK",
        "base",
        "instanceRefresh.preferences.autoRollback",
    ),
    # CreateNodegroup: no diskSize with a launch template
    (
        "llm-train-eks",
        "aws:eks/nodeGroup:NodeGroup",
        "ondemand",
        setting("diskSize", 100),
        "PF-EKS-NODEGROUP",
        "ondemand",
        "diskSize",
    ),
    # PERSISTENT_2 SSD: 1200, 2400 or multiples of 2400 GiB
    (
        "llm-train",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "",
        setting("storageCapacity", 3000),
        "PF-FSX-CAPACITY",
        "lustre",
        "storageCapacity",
    ),
    # PERSISTENT_2: 125, 250, 500 or 1000 MB/s/TiB
    (
        "llm-train",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "",
        setting("perUnitStorageThroughput", 200),
        "PF-FSX-THROUGHPUT",
        "lustre",
        "perUnitStorageThroughput",
    ),
    # CreateDataRepositoryAssociation: not on SCRATCH_1
    ("llm-train", "aws:fsx/lustreFileSystem:LustreFileSystem", "", _scratch, "PF-FSX-DRA", "dataset", "fileSystemId"),
    # S3 replication: versioning enabled on every destination
    (
        "model-registry",
        "aws:s3/bucketVersioning:BucketVersioning",
        "us-west-2",
        setting("versioningConfiguration.status", "Suspended"),
        "PF-S3-REPLICATION",
        "replication-rules",
        "rules[2].destination.bucket",
    ),
    # ResourceRecordSet: a latency record carries a set identifier
    (
        "chat-serve",
        "aws:route53/record:Record",
        "",
        removing("setIdentifier"),
        "PF-R53-RECORD",
        "routing",
        "setIdentifier",
    ),
    # CreateListener: HTTPS needs a certificate
    (
        "chat-serve",
        "aws:lb/listener:Listener",
        "https",
        removing("certificateArn"),
        "PF-ELB-CERT",
        "https",
        "certificateArn",
    ),
    # Global Accelerator: no client IP preservation on an NLB without security groups
    (
        ("chat-serve", GA_NLB),
        "aws:lb/loadBalancer:LoadBalancer",
        "us-east-1",
        removing("securityGroups"),
        "PF-GA-CLIENTIP",
        "us-east-1",
        "endpointConfigurations[0].clientIpPreservationEnabled",
    ),
    # IAM grammar: an action is service:Action
    (
        "llm-train",
        "aws:iam/rolePolicy:RolePolicy",
        "slurm",
        _bad_action,
        "PF-IAM-DOC",
        "slurm-access",
        "policy:Statement[0].Action",
    ),
    # KMS: a key policy that does not let its own account administer the key
    ("model-registry", "aws:kms/key:Key", "us-west-2", _ownerless, "PF-KMS-POLICY", "us-west-2-key", "policy"),
    # CreateAlias: alias names begin with alias/
    (
        "llm-train",
        "aws:kms/alias:Alias",
        "",
        setting("name", "gpuinfra/llm-train"),
        "PF-KMS-ALIAS",
        "key-alias",
        "name",
    ),
    # ACM certificates are regional: a us-west-2 certificate on a us-east-1 listener
    (
        "chat-serve",
        "aws:lb/listener:Listener",
        "us-east-1-endpoint-https",
        setting("certificateArn", "arn:aws:acm:us-west-2:222222222222:certificate/x"),
        "PF-X-CERT",
        "us-east-1-endpoint-https",
        "certificateArn",
    ),
]


def _base(stack: Any) -> Graph:
    if isinstance(stack, tuple):
        return graph_for(*stack)
    return example_graph(stack)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[4]}-{c[6]}" for c in CASES])
def test_documented_rule_catches_its_violation(case: tuple[Any, ...]) -> None:
    stack, type_, selector, mutate, rule, name_part, path = case
    base = _base(stack)
    graph, _ = planted(base, type_, mutate, _index(base, type_, selector))
    _caught(graph, rule, name_part, path)


def test_the_ssm_ami_rule_fires_on_an_ssm_ami_with_a_root_device_and_not_on_a_plain_ami() -> None:
    """The Slurm controller that had this defect is gone (AWS PCS runs slurmctld); the rule stays, planted."""
    from planting import added

    base = example_graph("llm-train")
    assert "PF-EC2-SSM-ROOT" not in {f.rule for f in preflight(base, load_catalog())}
    inputs = {
        "ami": "resolve:ssm:/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id",
        "instanceType": "m7i.2xlarge",
        "rootBlockDevice": {"volumeSize": 100, "volumeType": "gp3", "encrypted": True},
    }
    bad, _ = added(base, "aws:ec2/instance:Instance", "controller", inputs, LT)
    assert "PF-EC2-SSM-ROOT" in {f.rule for f in preflight(bad, load_catalog())}
    inputs["ami"] = "ami-0123456789abcdef0"
    fixed, _ = added(base, "aws:ec2/instance:Instance", "controller", inputs, LT)
    assert "PF-EC2-SSM-ROOT" not in {f.rule for f in preflight(fixed, load_catalog())}


PLANTED_RULES = {c[4] for c in CASES} | {"PF-EC2-SSM-ROOT", "PF-X-DEPENDS", "PF-X-TARGET"}


def test_every_documented_rule_has_a_planted_case() -> None:
    assert {r.id for r in RULES} - PLANTED_RULES == set()


# ---- Kubernetes: strict OpenAPI, per kind -------------------------------------------------------
K8S = [
    ("chat-serve-k8s", "kubernetes:apps/v1:Deployment", setting("spec.replicas", "two"), "spec.replicas"),
    ("chat-serve-k8s", "kubernetes:core/v1:Service", setting("spec.bogus", 1), "spec"),
    ("chat-serve-k8s", "kubernetes:core/v1:ServiceAccount", setting("automountToken", True), ""),
    ("chat-serve-k8s", "kubernetes:core/v1:Namespace", setting("spec.finalizer", ["x"]), "spec"),
    ("chat-serve-k8s", "kubernetes:policy/v1:PodDisruptionBudget", setting("spec.minAvailabel", 1), "spec"),
    (  # no stack runs a DaemonSet of its own since the on-premises RDMA plugin became the site's: the pruner
        "llm-train-onprem",
        "kubernetes:batch/v1:CronJob",
        setting("spec.jobTemplate.spec.template.spec.hostNetwork", "yes"),
        "spec.jobTemplate.spec.template.spec.hostNetwork",
    ),
    (  # on premises the site's Lustre is a checked host mount: the FSx static volume is EKS's
        "llm-train-eks",
        "kubernetes:core/v1:PersistentVolume",
        setting("spec.accessModes", "ReadWriteMany"),
        "spec.accessModes",
    ),
    ("llm-train-eks", "kubernetes:core/v1:PersistentVolumeClaim", setting("spec.volumeName", 3), "spec.volumeName"),
    ("llm-train-onprem", "kubernetes:core/v1:NodePatch", setting("metadata.labels.rack", 7), "metadata.labels.rack"),
    ("llm-train-onprem", "kubernetes:core/v1:ConfigMap", setting("data.count", 3), "data.count"),
]


@pytest.mark.parametrize(("stack", "type_", "mutate", "path"), K8S, ids=[k[1].rsplit(":", 1)[-1] for k in K8S])
def test_kubernetes_object_violation_is_caught(stack: str, type_: str, mutate: Any, path: str) -> None:
    graph, target = planted(example_graph(stack), type_, mutate)
    findings = [f for f in preflight(graph, load_catalog()) if f.urn == target.urn and f.rule == "PF-K8S-SCHEMA"]
    assert any(f.path == path for f in findings), [(f.path, f.message) for f in findings]


def test_hpa_variant_object_violation_is_caught() -> None:
    graph, target = planted(
        graph_for(
            "chat-serve-k8s",
            {"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"},
        ),
        "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
        setting("spec.maxReplicas", "8"),
    )
    assert any(f.path == "spec.maxReplicas" for f in preflight(graph, load_catalog()) if f.urn == target.urn)


def test_a_misspelt_field_in_the_embedded_job_template_is_caught() -> None:
    def misspell(inputs: dict[str, Any]) -> None:
        inputs["data"]["jobset.yaml"] = inputs["data"]["jobset.yaml"].replace("backoffLimit: 0", "backoffLimits: 0")

    base = example_graph("llm-train-eks")
    graph, target = planted(
        base, "kubernetes:core/v1:ConfigMap", misspell, _index(base, "kubernetes:core/v1:ConfigMap", "job-template")
    )
    hits = [f for f in preflight(graph, load_catalog()) if f.urn == target.urn and f.rule == "PF-K8S-EMBEDDED"]
    assert hits and "backoffLimits" in hits[0].message, hits


def test_an_unreadable_embedded_job_template_is_an_error_not_a_skip() -> None:
    # An unclosed flow sequence: libyaml refuses it, and preflight says so instead of judging nothing.
    def break_it(inputs: dict[str, Any]) -> None:
        inputs["data"]["jobset.yaml"] = inputs["data"]["jobset.yaml"].replace("backoffLimit: 0", "backoffLimit: [0")

    base = example_graph("llm-train-eks")
    graph, target = planted(
        base, "kubernetes:core/v1:ConfigMap", break_it, _index(base, "kubernetes:core/v1:ConfigMap", "job-template")
    )
    hits = [f for f in preflight(graph, load_catalog()) if f.urn == target.urn and f.rule == "PF-K8S-EMBEDDED"]
    assert [f.path for f in hits] == ["data.jobset.yaml"], hits
    assert "not valid YAML" in hits[0].message and hits[0].blocking


def test_auto_rollback_on_a_group_whose_template_image_is_an_ami_passes() -> None:
    """The stacks set AutoRollback only where AWS supports it: a region pinned to an AMI id rolls back (and the
    example's pinned SSM version, read at deploy, everywhere)."""
    pinned = graph_for("chat-serve", {"regions[3].image_id": "ami-0abc1234def567890"})
    assert any((g.inputs["instanceRefresh"]["preferences"].get("autoRollback") is True) for g in pinned.of_type(ASG))
    assert not [f for f in preflight(pinned, load_catalog()) if f.rule == "PF-ASG-ROLLBACK"]
