"""The example training stack's resource graph (Slurm as an AWS PCS cluster), and how spec changes change it."""

from __future__ import annotations

import base64
import json
import re

import pytest
from gpuinfra.graph import Graph, Resource, tokens
from gpuinfra.graph.views import allows_everything
from helpers import ample_quotas, example_graph, graph_for

LT = "aws:ec2/launchTemplate:LaunchTemplate"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
NG = tokens.PCS_NODE_GROUP
SPOT_ABOVE_4 = {"type": "spot", "on_demand_base": 4}
"""llm-train's capacity before the review's finding T15."""


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("llm-train")


def provider_tags(graph: Graph, resource: Resource) -> dict[str, str]:
    provider = graph.provider_of(resource)
    assert provider is not None, resource.urn
    return json.loads(provider.inputs["defaultTags"])["tags"]


def groups(graph: Graph) -> dict[str, Resource]:
    return {r.name.rsplit("-", 1)[-1]: r for r in graph.of_type(NG)}


def template_of(graph: Graph, group: Resource) -> Resource:
    (lt,) = graph.dependencies_of(group, tokens.LAUNCH_TEMPLATE)
    return lt


def test_explicit_aws_and_aws_native_providers_in_the_training_account(graph: Graph) -> None:
    providers = {p.type: p for p in graph.providers()}
    assert set(providers) == {"pulumi:providers:aws", "pulumi:providers:aws-native"}
    native = providers["pulumi:providers:aws-native"]
    assert json.loads(native.inputs["allowedAccountIds"]) == ["111111111111"]
    assert json.loads(native.inputs["assumeRole"])["roleArn"] == "arn:aws:iam::111111111111:role/gpuinfra-deploy"
    assert native.inputs["region"] == "us-east-1"
    for resource in graph.custom_resources():
        expected = native if resource.type.startswith("aws-native:") else providers["pulumi:providers:aws"]
        assert resource.provider == expected.urn, resource.urn


def test_every_resource_carries_the_workload_tag(graph: Graph) -> None:
    for resource in graph.custom_resources():
        tags = provider_tags(graph, resource)
        assert tags["workload"] == "training"
        assert tags["gpuinfra:stack"] == "llm-train" and tags["gpuinfra:cluster"] == "llm-train"


def test_a_pcs_cluster_node_groups_a_queue_and_a_login_group(graph: Graph) -> None:
    cluster = graph.one(tokens.PCS_CLUSTER).inputs
    assert cluster["scheduler"] == {"type": "SLURM", "version": "25.05"}
    assert cluster["size"] == "SMALL"  # 16 nodes + 1 login <= 32 (PCS API Reference, Cluster.size)
    assert cluster["slurmConfiguration"]["accounting"]["mode"] == "STANDARD"
    settings = {s["parameterName"]: s["parameterValue"] for s in cluster["slurmConfiguration"]["slurmCustomSettings"]}
    # the health check is a timer on the nodes now, not a cluster setting outside the schema's documented three
    assert not any(name.startswith("HealthCheck") for name in settings)
    found = groups(graph)
    scaling = {k: g.inputs["scalingConfiguration"] for k, g in found.items()}
    assert {
        k: (g.inputs["purchaseOption"], scaling[k]["minInstanceCount"], scaling[k]["maxInstanceCount"])
        for k, g in found.items()
    } == {
        "od": ("ONDEMAND", 16, 16),  # the gang, static, on its On-Demand Capacity Reservation
        "elastic": ("SPOT", 0, 2),  # spot beside it, from none up to compute.elastic.max_nodes
        "login": ("ONDEMAND", 1, 1),
    }
    queues = {q.inputs["name"]: q.inputs for q in graph.of_type(tokens.PCS_QUEUE)}
    assert set(queues) == {"train", "elastic"}  # the login group takes no jobs
    members = {
        name: [c["computeNodeGroupId"] for c in q["computeNodeGroupConfigurations"]] for name, q in queues.items()
    }
    queue_urns = {q.inputs["name"]: q for q in graph.of_type(tokens.PCS_QUEUE)}
    for name, group in (("train", found["od"]), ("elastic", found["elastic"])):
        assert len(members[name]) == 1
        assert graph.dependencies_of(queue_urns[name], NG) == [group]


def test_the_gang_launches_into_its_reservation_and_the_elastic_nodes_are_spot(graph: Graph) -> None:
    """The review's finding T15: the gang's group targets the On-Demand Capacity Reservation (no market option: an
    ODCR runs on-demand instances; AWS PCS User Guide, "Using ODCRs with AWS PCS"); the elastic group is spot and
    targets none; both in the placement group."""
    found = groups(graph)
    gang = template_of(graph, found["od"]).inputs
    assert gang["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0a1b2c3d4e5f60718"}
    }
    assert "instanceMarketOptions" not in gang
    elastic = template_of(graph, found["elastic"]).inputs
    assert "capacityReservationSpecification" not in elastic and "instanceMarketOptions" not in elastic
    assert found["elastic"].inputs["spotOptions"] == {"allocationStrategy": "capacity-optimized"}
    assert gang["placement"] == elastic["placement"]


def test_no_home_made_slurm_remains(graph: Graph) -> None:
    assert not graph.of_type(tokens.ASG)
    for instance in graph.of_type(tokens.INSTANCE):
        assert not str(instance.inputs.get("ami", "")).startswith("resolve:ssm:")
    assert not graph.of_type(tokens.INSTANCE)


def node_policy(graph: Graph) -> Resource:
    """The compute nodes' inline policy (the login node has its own, with the repair loop's grants)."""
    return graph.named(tokens.IAM_ROLE_POLICY, "llm-train-slurm-access")


def test_node_groups_take_the_pinned_image_and_a_pcs_profile(graph: Graph) -> None:
    amis = {g.inputs["amiId"] for g in graph.of_type(NG)}
    assert len(amis) == 1 and next(iter(amis)).startswith("ami-")
    profiles = graph.of_type(tokens.IAM_INSTANCE_PROFILE)
    assert len(profiles) == 2 and all(p.inputs["path"] == "/aws-pcs/" for p in profiles)
    policy = node_policy(graph).inputs["policy"]
    by_sid = {s["Sid"]: s for s in json.loads(policy)["Statement"]}
    assert by_sid["RegisterWithPcs"]["Action"] == ["pcs:RegisterComputeNodeGroupInstance"]


def test_launch_template_has_an_efa_on_every_efa_card(graph: Graph) -> None:
    lt = template_of(graph, groups(graph)["od"]).inputs
    nis = lt["networkInterfaces"]
    assert (nis[0]["networkCardIndex"], nis[0]["deviceIndex"], nis[0].get("interfaceType")) == (0, 0, None)
    efa = [(n["networkCardIndex"], n["deviceIndex"]) for n in nis if n.get("interfaceType") == "efa-only"]
    assert efa == [(0, 1)] + [(card, 0) for card in range(1, 32)]  # p5.48xlarge: EFA on all 32 cards
    assert "instanceType" not in lt and "iamInstanceProfile" not in lt  # the node group's (PCS User Guide)


def test_p6_b300_has_no_efa_on_card_zero() -> None:
    # the catalog's price snapshot sells p6-b300.48xlarge in us-west-2 only (instance-type-not-in-region)
    graph = graph_for(
        "llm-train",
        {
            "compute.instance_type": "p6-b300.48xlarge",
            "compute.capacity": {"type": "on_demand"},
            "compute.elastic": None,  # no source names the P6 spot quota (quota-short fails closed)
            "region": "us-west-2",
            "availability_zone": "us-west-2a",
        },
        ample_quotas("ml-training", "us-west-2"),
    )
    lt = template_of(graph, groups(graph)["od"]).inputs
    efa = sorted(n["networkCardIndex"] for n in lt["networkInterfaces"] if n.get("interfaceType") == "efa-only")
    assert efa == list(range(1, 17))


def test_launch_template_requires_imdsv2_encrypts_ebs_and_uses_the_placement_group(graph: Graph) -> None:
    pg = graph.one(tokens.PLACEMENT_GROUP)
    assert pg.inputs["strategy"] == "cluster"
    for name, group in groups(graph).items():
        lt = template_of(graph, group).inputs
        assert lt["metadataOptions"]["httpTokens"] == "required"
        ebs = lt["blockDeviceMappings"][0]["ebs"]
        assert ebs["encrypted"] == "true" and "kmsKeyId" not in ebs  # the AWS-managed EBS key
        assert ("placement" in lt) is (name != "login")
        text = base64.b64decode(lt["userData"]).decode()
        assert "Content-Type: multipart/mixed" in text


def test_user_data_fits_ec2s_16_kb_with_room_for_pcs_part(graph: Graph) -> None:
    """EC2 takes 16,384 bytes of user data before base64 (EC2 User Guide, user data); PCS adds its own MIME part to
    ours at launch (PCS User Guide, launch templates) and documents no size for it: 2 KB are kept free for it and
    the next addition (our margin; review finding T16 found 1 KB too tight). The scripts travel gzip+base64 (cloud-init
    write_files encoding gz+b64), and each node carries only what runs there (no task prolog on the login node)."""
    sizes = {lt.name: len(base64.b64decode(lt.inputs["userData"])) for lt in graph.of_type(tokens.LAUNCH_TEMPLATE)}
    assert len(sizes) == 3 and all(size <= 16_384 - 2_048 for size in sizes.values()), sizes


def test_lustre_matches_the_spec(graph: Graph) -> None:
    fs = graph.one(FSX).inputs
    assert fs["deploymentType"] == "PERSISTENT_2"
    assert fs["storageCapacity"] == 57600 and fs["perUnitStorageThroughput"] == 250
    assert fs["kmsKeyId"].startswith("arn:aws:kms:")
    paths = {
        d.inputs["fileSystemPath"]: d.inputs["dataRepositoryPath"]
        for d in graph.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    }
    assert paths == {
        "/datasets": "s3://acme-datasets/pretrain/v7",
        "/checkpoints": "s3://acme-llm-train-checkpoints/checkpoints",
    }


def test_lustre_is_efa_enabled_for_p5_slurm_nodes(graph: Graph) -> None:
    """p5 nodes on Slurm: EFA-enabled by default, with the metadata configuration FSx requires for it, and only
    security groups that let all traffic in and out to themselves (FSx for Lustre User Guide, "Working with
    EFA-enabled file systems" and "EFA-enabled security groups")."""
    fs = graph.one(FSX)
    assert fs.inputs["efaEnabled"] is True
    assert fs.inputs["metadataConfiguration"] == {"mode": "AUTOMATIC"}
    assert fs.inputs["fileSystemTypeVersion"] == "2.15"
    groups_ = [r for r in graph.of_type("aws:ec2/securityGroup:SecurityGroup") if r.urn in fs.dependencies]
    assert groups_
    for group in groups_:
        every = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}
        assert any(every.items() <= rule.items() for rule in group.inputs["ingress"]), group.inputs["ingress"]
        assert any(every.items() <= rule.items() for rule in group.inputs["egress"]), group.inputs["egress"]


def test_lustre_without_efa_has_neither_argument_and_plain_steps() -> None:
    """lustre.efa false: no EFA, no metadata configuration (as before), and 2,400 GiB steps (48,000 stays)."""
    fs = graph_for("llm-train", {"lustre.efa": False, "lustre.storage_capacity_gib": 48000}).one(FSX).inputs
    assert "efaEnabled" not in fs and "metadataConfiguration" not in fs
    assert fs["storageCapacity"] == 48000


def test_eks_lustre_stays_on_tcp_by_default() -> None:
    """EKS nodes are not set up as EFA clients by this stack: the default leaves EFA off there."""
    fs = example_graph("llm-train-eks").one(FSX).inputs
    assert "efaEnabled" not in fs and "metadataConfiguration" not in fs


def test_checkpoint_bucket_is_private_versioned_and_expires_only_superseded(graph: Graph) -> None:
    bucket = graph.named("aws:s3/bucket:Bucket", "llm-train-storage-checkpoints")
    assert bucket.inputs["bucket"] == "acme-llm-train-checkpoints"

    def for_bucket(type_: str) -> dict:
        (config,) = [r for r in graph.of_type(type_) if bucket.urn in r.dependencies]
        return config.inputs

    sse = for_bucket("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
    assert sse["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256"
    block = for_bucket("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert all(
        block[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    )
    assert for_bucket("aws:s3/bucketVersioning:BucketVersioning")["versioningConfiguration"]["status"] == "Enabled"
    rules = for_bucket("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")["rules"]
    expiring = [r for r in rules if "expiration" in r]
    assert len(expiring) == 1  # no age rule on the checkpoints themselves: the last good one is never expired
    assert expiring[0]["expiration"]["days"] == 14
    assert expiring[0]["filter"] == {"tag": {"key": "gpuinfra-superseded", "value": "true"}}


def test_export_carries_new_and_changed_never_deleted(graph: Graph) -> None:
    export = graph.named(tokens.FSX_DRA, "llm-train-storage-checkpoint-export").inputs
    assert export["s3"]["autoExportPolicy"]["events"] == ["NEW", "CHANGED"]


def test_the_pcs_key_policy_names_only_its_account(graph: Graph) -> None:
    """PCS root volumes use the AWS-managed EBS key; the cluster key encrypts Lustre only, so its policy names no
    Auto Scaling role (which KMS would refuse in an account that has never used Auto Scaling)."""
    policy = json.loads(graph.one(tokens.KMS_KEY).inputs["policy"])
    principals = {s["Sid"]: s["Principal"]["AWS"] for s in policy["Statement"]}
    assert principals == {"AccountAdministers": "arn:aws:iam::111111111111:root"}
    for lt in graph.of_type(tokens.LAUNCH_TEMPLATE):
        assert all("kmsKeyId" not in m["ebs"] for m in lt.inputs["blockDeviceMappings"]), lt.name


def test_the_eks_key_policy_does_not_depend_on_the_auto_scaling_service_linked_role() -> None:
    """A fresh account has no AWSServiceRoleForAutoScaling until Auto Scaling is first used, and KMS refuses a key
    policy naming a principal that does not exist: the key names the account alone, and the managed node groups'
    root volumes use the AWS-managed EBS key (no key policy of ours to name the role in)."""
    eks = example_graph("llm-train-eks")
    policy = json.loads(eks.one(tokens.KMS_KEY).inputs["policy"])
    principals = {s["Sid"]: s["Principal"]["AWS"] for s in policy["Statement"]}
    assert principals == {"AccountAdministers": "arn:aws:iam::111111111111:root"}
    assert "autoscaling" not in eks.one(tokens.KMS_KEY).inputs["policy"]
    templates = eks.of_type(tokens.LAUNCH_TEMPLATE)
    assert templates
    for lt in templates:
        for mapping in lt.inputs["blockDeviceMappings"]:
            assert mapping["ebs"]["encrypted"] == "true" and "kmsKeyId" not in mapping["ebs"], lt.name


def test_pcs_launch_templates_map_the_root_device_the_image_reports(graph: Graph) -> None:
    """One mapping, on the device the AMI lookup returns (the engine's stand-in for DescribeImages answers
    /dev/xvda, the PCS sample AMIs' root), never the hard-coded /dev/sda1 that added an unused volume."""
    for lt in graph.of_type(tokens.LAUNCH_TEMPLATE):
        (mapping,) = lt.inputs["blockDeviceMappings"]
        assert mapping["deviceName"] == "/dev/xvda", lt.name
        assert mapping["ebs"]["encrypted"] == "true"


def test_instance_profile_is_least_privilege(graph: Graph) -> None:
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        statements = json.loads(policy.inputs["policy"])["Statement"]
        assert not any(allows_everything(s) for s in statements)
        for s in statements:
            assert "*" not in s["Action"] and all(not a.endswith(":*") for a in s["Action"])
    node = node_policy(graph)
    by_sid = {s["Sid"]: s for s in json.loads(node.inputs["policy"])["Statement"]}
    assert by_sid["DatasetObjects"]["Action"] == ["s3:GetObject"]
    assert by_sid["DatasetObjects"]["Resource"] == ["arn:aws:s3:::acme-datasets/pretrain/v7/*"]
    assert "s3:PutObject" in by_sid["CheckpointsObjects"]["Action"]
    assert by_sid["RegistryUploadObjects"]["Resource"] == ["arn:aws:s3:::acme-model-registry/uploads/*"]


def test_security_group_is_self_only_and_closed_to_the_internet(graph: Graph) -> None:
    sg = graph.named("aws:ec2/securityGroup:SecurityGroup", "llm-train-net-efa").inputs
    (ingress,) = sg["ingress"]
    assert ingress["self"] is True and not ingress.get("cidrBlocks")
    assert any(e.get("self") for e in sg["egress"])
    assert [e["fromPort"] for e in sg["egress"] if e.get("cidrBlocks")] == [443]


def test_the_pcs_controller_has_its_own_group_with_the_rules_pcs_documents(graph: Graph) -> None:
    """botocore 1.44.8 PCS model, Networking.securityGroupIds: "Inbound rule 1: Protocol All, Ports All, Source
    Self; Outbound rule 1: All, All, 0.0.0.0/0; Outbound rule 2: All, All, Self"."""
    (group,) = graph.dependencies_of(graph.one(tokens.PCS_CLUSTER), "aws:ec2/securityGroup:SecurityGroup")
    assert group.name == "llm-train-slurm-pcs-sg"
    rules = {
        d: sorted(
            (r["protocol"], r["fromPort"], r["toPort"], bool(r.get("self")), tuple(r.get("cidrBlocks") or ()))
            for r in group.inputs[d]
        )
        for d in ("ingress", "egress")
    }
    assert rules == {
        "ingress": [("-1", 0, 0, True, ())],
        "egress": [("-1", 0, 0, False, ("0.0.0.0/0",)), ("-1", 0, 0, True, ())],
    }


def test_node_primary_interfaces_join_the_controller_group_efa_interfaces_stay_in_the_efa_group(graph: Graph) -> None:
    (controller,) = graph.one(tokens.PCS_CLUSTER).inputs["networking"]["securityGroupIds"]
    efa_counts = {}
    for name, group in groups(graph).items():
        interfaces = template_of(graph, group).inputs["networkInterfaces"]
        primary = [i for i in interfaces if i.get("interfaceType") != "efa-only"]
        efa = [i for i in interfaces if i.get("interfaceType") == "efa-only"]
        assert len(primary) == 1 and controller in primary[0]["securityGroups"], group.name
        assert len(primary[0]["securityGroups"]) == 2
        efa_group = next(g for g in primary[0]["securityGroups"] if g != controller)
        assert all(i["securityGroups"] == [efa_group] for i in efa), group.name
        efa_counts[name] = len(efa)
    assert efa_counts == {"od": 32, "elastic": 32, "login": 0}  # p5.48xlarge: an EFA on each of its 32 cards


def test_twice_the_nodes_doubles_the_capacity() -> None:
    graph = graph_for("llm-train", {"compute.node_count": 32}, ample_quotas())
    sizes = {k: g.inputs["scalingConfiguration"]["maxInstanceCount"] for k, g in groups(graph).items()}
    assert sizes == {"od": 32, "elastic": 2, "login": 1}
    spot = graph_for("llm-train", {"compute.node_count": 32, "compute.capacity": SPOT_ABOVE_4}, ample_quotas())
    sizes = {k: g.inputs["scalingConfiguration"]["maxInstanceCount"] for k, g in groups(spot).items()}
    assert sizes == {"od": 4, "spot": 28, "elastic": 2, "login": 1}
    assert graph.one(tokens.PCS_CLUSTER).inputs["size"] == "MEDIUM"  # 33 > 32


def test_on_demand_and_capacity_block_capacity() -> None:
    graph = graph_for("llm-train", {"compute.capacity": {"type": "on_demand"}, "compute.elastic": None}, ample_quotas())
    assert {k: g.inputs["purchaseOption"] for k, g in groups(graph).items()} == {"od": "ONDEMAND", "login": "ONDEMAND"}
    assert "capacityReservationSpecification" not in template_of(graph, groups(graph)["od"]).inputs
    block = {
        "type": "capacity_block",
        "capacity_reservation_id": "cr-0123456789abcdef0",
        "block_end": "2099-01-01T00:00:00Z",
    }
    graph = graph_for("llm-train", {"compute.capacity": block}, ample_quotas())
    found = groups(graph)
    assert found["block"].inputs["purchaseOption"] == "CAPACITY_BLOCK"
    lt = template_of(graph, found["block"]).inputs
    assert lt["instanceMarketOptions"]["marketType"] == "capacity-block"
    target = lt["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"] == "cr-0123456789abcdef0"


def test_home_is_an_encrypted_efs_with_a_mount_target_per_node_subnet(graph: Graph) -> None:
    """Amazon EFS User Guide: a mount target serves its Availability Zone's clients, and its security group must
    admit NFS (TCP 2049) from theirs."""
    fs = graph.one(tokens.EFS_FILE_SYSTEM)
    assert fs.inputs["encrypted"] is True and fs.inputs["throughputMode"] == "bursting"
    (target,) = graph.of_type(tokens.EFS_MOUNT_TARGET)
    node_subnets = {s for g in groups(graph).values() for s in g.inputs["subnetIds"]}
    assert {target.inputs["subnetId"]} == node_subnets
    (sg,) = graph.dependencies_of(target, "aws:ec2/securityGroup:SecurityGroup")
    (rule,) = sg.inputs["ingress"]
    assert (rule["protocol"], rule["fromPort"], rule["toPort"]) == ("tcp", 2049, 2049)
    assert not rule.get("cidrBlocks") and not sg.inputs.get("egress")
    efa = graph.named("aws:ec2/securityGroup:SecurityGroup", "llm-train-net-efa")
    assert efa in graph.dependencies_of(sg, "aws:ec2/securityGroup:SecurityGroup")  # the nodes' group, on every NIC


def test_every_node_mounts_home_from_efs_with_the_recommended_options(graph: Graph) -> None:
    """Amazon EFS User Guide, "Mounting EFS file systems using NFS": nfsvers=4.1, rsize and wsize 1 MiB, hard,
    timeo=600, retrans=2, noresvport; the DNS name is file-system-id.efs.region.amazonaws.com."""
    import email

    from helpers import cloud_config

    for name, group in groups(graph).items():
        lt = template_of(graph, group)
        text = base64.b64decode(lt.inputs["userData"]).decode()
        part = next(p for p in email.message_from_string(text).walk() if p.get_content_type() == "text/cloud-config")
        home = next(m for m in cloud_config(part.get_payload())["mounts"] if m[1] == "/home")
        assert re.fullmatch(r"fs-[0-9a-f]+\.efs\.us-east-1\.amazonaws\.com:/", home[0]), name
        assert home[2] == "nfs4"
        assert set(home[3].split(",")) >= {
            "nfsvers=4.1",
            "rsize=1048576",
            "wsize=1048576",
            "hard",
            "timeo=600",
            "retrans=2",
            "noresvport",
            "_netdev",
        }
        assert graph.one(tokens.EFS_MOUNT_TARGET) in graph.dependencies_of(lt, tokens.EFS_MOUNT_TARGET), name
