"""The example training stack's resource graph, and how spec changes change it."""

from __future__ import annotations

import json

import pytest
from helpers import ample_quotas, example_graph, graph_for

from infra.graph import Graph, Resource
from infra.graph.views import allows_everything

ASG = "aws:autoscaling/group:Group"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("llm-train")


def provider_tags(graph: Graph, resource: Resource) -> dict[str, str]:
    provider = graph.provider_of(resource)
    assert provider is not None, resource.urn
    return json.loads(provider.inputs["defaultTags"])["tags"]


def test_every_resource_has_an_explicit_provider_in_the_training_account(graph: Graph) -> None:
    (provider,) = graph.providers()
    assert provider.type == "pulumi:providers:aws" and provider.name != "default"
    assert json.loads(provider.inputs["allowedAccountIds"]) == ["111111111111"]
    assert json.loads(provider.inputs["assumeRoles"])[0]["roleArn"] == "arn:aws:iam::111111111111:role/gpuinfra-deploy"
    for resource in graph.custom_resources():
        assert resource.provider == provider.urn, resource.urn


def test_every_resource_carries_the_workload_tag(graph: Graph) -> None:
    for resource in graph.custom_resources():
        tags = provider_tags(graph, resource)
        assert tags["workload"] == "training"
        assert tags["gpuinfra:stack"] == "llm-train" and tags["gpuinfra:cluster"] == "llm-train"
    # Auto Scaling groups do not take provider default tags: they carry their own, propagated.
    asg_tags = {t["key"]: t for t in graph.one(ASG).inputs["tags"]}
    assert asg_tags["workload"]["value"] == "training" and asg_tags["workload"]["propagateAtLaunch"]
    expected = asg_tags["gpuinfra:expected-capacity"]
    assert expected["value"] == "16" and expected["propagateAtLaunch"] is False


def test_every_resource_is_parented_to_a_component_under_the_cluster(graph: Graph) -> None:
    cluster = graph.one("gpuinfra:training:Cluster")
    for resource in graph.custom_resources():
        assert cluster in graph.ancestors(resource), resource.urn
    assert "gpuinfra:training:Cluster$gpuinfra:training:Compute$aws:autoscaling/group:Group" in graph.one(ASG).urn


def test_launch_template_has_every_efa_interface_on_its_own_card(graph: Graph) -> None:
    interfaces = graph.one(LT).inputs["networkInterfaces"]
    assert len(interfaces) == 32  # the catalog's EFA count for p5.48xlarge
    assert sorted(i["networkCardIndex"] for i in interfaces) == list(range(32))
    assert {i["interfaceType"] for i in interfaces} == {"efa", "efa-only"}
    primary = next(i for i in interfaces if i["networkCardIndex"] == 0)
    assert primary["interfaceType"] == "efa" and primary["deviceIndex"] == 0


def test_launch_template_requires_imdsv2_and_encrypts_ebs(graph: Graph) -> None:
    lt = graph.one(LT).inputs
    assert lt["metadataOptions"]["httpTokens"] == "required"
    (root,) = lt["blockDeviceMappings"]
    assert root["ebs"]["encrypted"] == "true" and root["ebs"]["kmsKeyId"].startswith("arn:aws:kms:")


def test_group_uses_the_placement_group_and_only_the_one_subnet(graph: Graph) -> None:
    asg = graph.one(ASG)
    pg = graph.one("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    assert pg.urn in asg.dependencies and asg.inputs["placementGroup"].startswith(pg.name)
    (_subnet_id,) = asg.inputs["vpcZoneIdentifiers"]
    private = graph.named("aws:ec2/subnet:Subnet", "llm-train-net-private")
    assert private.urn in asg.dependencies and private.inputs["availabilityZone"] == "us-east-1a"
    assert all(s.inputs["availabilityZone"] == "us-east-1a" for s in graph.of_type("aws:ec2/subnet:Subnet"))


def test_group_honours_the_capacity_spec(graph: Graph) -> None:
    asg = graph.one(ASG).inputs
    assert asg["minSize"] == asg["maxSize"] == asg["desiredCapacity"] == 16
    dist = asg["mixedInstancesPolicy"]["instancesDistribution"]
    assert dist == {
        "onDemandBaseCapacity": 4,
        "onDemandPercentageAboveBaseCapacity": 0,
        "spotAllocationStrategy": "capacity-optimized",
    }


def test_lustre_matches_the_spec(graph: Graph) -> None:
    fs = graph.one(FSX).inputs
    assert fs["deploymentType"] == "PERSISTENT_2"
    assert fs["storageCapacity"] == 48000 and fs["perUnitStorageThroughput"] == 250
    assert fs["kmsKeyId"].startswith("arn:aws:kms:")
    paths = {
        d.inputs["fileSystemPath"]: d.inputs["dataRepositoryPath"]
        for d in graph.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    }
    assert paths == {
        "/datasets": "s3://acme-datasets/pretrain/v7",
        "/checkpoints": "s3://acme-llm-train-checkpoints/checkpoints",
    }


def test_checkpoint_bucket_is_encrypted_private_versioned_and_expires(graph: Graph) -> None:
    bucket = graph.one("aws:s3/bucket:Bucket")
    assert bucket.inputs["bucket"] == "acme-llm-train-checkpoints"

    def for_bucket(type_: str) -> dict:
        (config,) = [r for r in graph.of_type(type_) if bucket.urn in r.dependencies]
        return config.inputs

    sse = for_bucket("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    assert sse["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
    block = for_bucket("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert all(
        block[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    )
    assert for_bucket("aws:s3/bucketVersioning:BucketVersioning")["versioningConfiguration"]["status"] == "Enabled"
    (rule,) = for_bucket("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")["rules"]
    assert rule["expiration"]["days"] == 14 and rule["filter"]["prefix"] == "checkpoints/"


def test_instance_profile_is_least_privilege(graph: Graph) -> None:
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        statements = json.loads(policy.inputs["policy"])["Statement"]
        assert not any(allows_everything(s) for s in statements)
        for s in statements:
            assert "*" not in s["Action"] and all(not a.endswith(":*") for a in s["Action"])
    node = graph.named("aws:iam/rolePolicy:RolePolicy", "llm-train-compute-access")
    by_sid = {s["Sid"]: s for s in json.loads(node.inputs["policy"])["Statement"]}
    assert by_sid["DatasetObjects"]["Action"] == ["s3:GetObject"]
    assert by_sid["DatasetObjects"]["Resource"] == ["arn:aws:s3:::acme-datasets/pretrain/v7/*"]
    assert "s3:PutObject" in by_sid["CheckpointsObjects"]["Action"]
    assert by_sid["RegistryUploadObjects"]["Resource"] == ["arn:aws:s3:::acme-model-registry/uploads/*"]


def test_security_group_is_self_only_and_closed_to_the_internet(graph: Graph) -> None:
    sg = graph.one("aws:ec2/securityGroup:SecurityGroup").inputs
    (ingress,) = sg["ingress"]
    assert ingress["self"] is True and not ingress.get("cidrBlocks")
    assert any(e.get("self") for e in sg["egress"])


def test_twice_the_nodes_doubles_the_capacity() -> None:
    base = example_graph("llm-train").one(ASG).inputs
    doubled = (
        graph_for("llm-train", {"compute.node_count": 32, "checkpointing.interval_minutes": 120}, ample_quotas())
        .one(ASG)
        .inputs
    )
    assert doubled["maxSize"] == 2 * base["maxSize"] and doubled["desiredCapacity"] == 2 * base["desiredCapacity"]


def test_another_instance_type_brings_its_efa_count() -> None:
    graph = graph_for(
        "llm-train",
        {"compute.instance_type": "p4d.24xlarge", "compute.node_count": 16, "racks.power_budget_kw": 30},
        ample_quotas(),
    )
    assert len(graph.one(LT).inputs["networkInterfaces"]) == 4
    assert graph.one(LT).inputs["instanceType"] == "p4d.24xlarge"


def test_on_demand_and_capacity_block_capacity() -> None:
    on_demand = graph_for("llm-train", {"compute.capacity": {"type": "on_demand"}}, ample_quotas())
    asg = on_demand.one(ASG).inputs
    assert "mixedInstancesPolicy" not in asg and asg["launchTemplate"]["version"] == "$Latest"
    block = graph_for(
        "llm-train", {"compute.capacity": {"type": "capacity_block", "capacity_reservation_id": "cr-0123456789abcdef0"}}
    )
    lt = block.one(LT).inputs
    assert lt["instanceMarketOptions"]["marketType"] == "capacity-block"
    assert (
        lt["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"]
        == "cr-0123456789abcdef0"
    )


def test_slurm_controller_is_private_imdsv2_and_encrypted(graph: Graph) -> None:
    controller = graph.one("aws:ec2/instance:Instance").inputs
    assert controller["metadataOptions"]["httpTokens"] == "required"
    assert controller["rootBlockDevice"]["encrypted"] is True
    assert controller["privateIp"] == "10.0.0.10" and "associatePublicIpAddress" not in controller
    assert "SlurmctldHost=slurmctl(10.0.0.10)" in controller["userData"]
