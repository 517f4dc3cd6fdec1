"""Internal endpoints in a private hosted zone (review expert-inference-2 S5): an internal fleet's latency records go to
a Route 53 private zone the stack makes for its domain, associated with the VPCs its load balancers are in (each
Kubernetes cluster's, read from the controller's NLB; the EC2 fleet's own), never to a public zone; an internet-facing
fleet keeps its public zone (a zone given for an internal fleet is unused, and the warning
internal-records-in-public-zone says so: tests/validators/test_serving.py). Checked through the generated resources,
preflight (botocore's Route 53 model), and moto's Route 53: the zone as CreateHostedZone and
AssociateVPCWithHostedZone build it is private, found from each fleet VPC and from no other, and holds the records.

Sources: Route 53 DG, "Working with private hosted zones" and "Choosing a routing policy" (latency records in a
private zone); Route 53 API reference, CreateHostedZone (VPC, HostedZoneConfig.PrivateZone), ListHostedZonesByVPC."""

from __future__ import annotations

import json
from dataclasses import replace

import boto3
import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds.aws.preflight.requests.routing import hosted_zone, record
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight import preflight
from helpers import example_data, example_graph, graph_for
from moto import mock_aws

ZONE = "aws:route53/zone:Zone"
RECORD = "aws:route53/record:Record"
VPC = "aws:ec2/vpc:Vpc"
K8S = example_data("chat-serve-k8s")["config"]["gpuinfra:inference"]
INTERNAL_EC2 = {"load_balancer.type": "nlb", "access.waf": None, "access.scheme": "internal"}
PUBLIC_ZONE = example_data("chat-serve")["config"]["gpuinfra:inference"]["global_routing"]["hosted_zone_id"]


@pytest.fixture(scope="module")
def k8s() -> Graph:
    return example_graph("chat-serve-k8s")


@pytest.fixture(scope="module")
def internal_ec2() -> Graph:
    """Made internal with its public zone still given (the warning says it is unused): the records still go to the
    private zone."""
    return graph_for("chat-serve", INTERNAL_EC2)


def the_zone(graph: Graph) -> Resource:
    (zone,) = graph.of_type(ZONE)
    return zone


def test_the_kubernetes_fleet_s_records_are_in_a_private_zone_of_the_clusters_vpcs(k8s: Graph) -> None:
    assert K8S["access"]["scheme"] == "internal" and "hosted_zone_id" not in K8S["global_routing"]
    zone = the_zone(k8s)
    assert zone.inputs["name"] == K8S["global_routing"]["domain_name"] == "chat-k8s.acme.example"
    vpcs = zone.inputs["vpcs"]
    assert [v["vpcRegion"] for v in vpcs] == [r["region"] for r in K8S["regions"]]
    for v in vpcs:  # the VPC the controller put each region's NLB in, read back at deploy
        assert v["vpcId"].startswith("vpc-") and "read at deploy" in k8s.after_apply[v["vpcId"]]
    records = k8s.of_type(RECORD)
    assert len(records) == 2
    for r in records:
        assert zone.urn in r.dependencies and r.inputs["zoneId"] != PUBLIC_ZONE
        assert r.inputs["latencyRoutingPolicies"][0]["region"] == r.inputs["setIdentifier"]


def test_the_internal_ec2_fleet_s_zone_is_associated_with_its_own_vpcs(internal_ec2: Graph) -> None:
    zone = the_zone(internal_ec2)
    regions = [r["region"] for r in example_data("chat-serve")["config"]["gpuinfra:inference"]["regions"]]
    assert [v["vpcRegion"] for v in zone.inputs["vpcs"]] == regions
    vpcs = internal_ec2.dependencies_of(zone, VPC)
    assert len(vpcs) == len(regions)  # each region's VPC, made by the stack
    assert all(zone.urn in r.dependencies and r.inputs["zoneId"] != PUBLIC_ZONE for r in internal_ec2.of_type(RECORD))


CLIENT = {"vpc_id": "vpc-0a1b2c3d4e5f60718", "region": "us-west-2"}


def test_client_vpcs_of_the_account_join_the_zone_after_the_fleet_s() -> None:
    graph = graph_for("chat-serve-k8s", {"access.client_vpcs": [CLIENT]})
    vpcs = the_zone(graph).inputs["vpcs"]
    assert [v["vpcRegion"] for v in vpcs] == ["us-east-1", "eu-central-1", "us-west-2"]
    assert vpcs[-1] == {"vpcId": CLIENT["vpc_id"], "vpcRegion": "us-west-2"}
    (_, *associations) = hosted_zone(the_zone(graph))  # created with the first, the others associated after
    assert [a.params["VPC"]["VPCId"] for a in associations] == [v["vpcId"] for v in vpcs[1:]]


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ({"access.client_vpcs": [CLIENT]}, "client_vpcs name VPCs that resolve an internal fleet's private zone"),
        (
            {**INTERNAL_EC2, "access.client_vpcs": [CLIENT, CLIENT]},
            "a client VPC is listed twice",
        ),
    ],
)
def test_client_vpcs_only_for_an_internal_fleet_and_each_once(mutation: dict, message: str) -> None:
    """Refused where the stack file is read, naming the field and the fix."""
    from gpuinfra.errors import InputError
    from helpers import inputs_for

    with pytest.raises(InputError, match=message) as info:
        inputs_for("chat-serve", mutation)
    assert "access.client_vpcs" in str(info.value) and "hint:" in str(info.value)


def test_an_internet_facing_fleet_keeps_its_public_zone() -> None:
    graph = example_graph("chat-serve")
    assert graph.of_type(ZONE) == []
    assert {r.inputs["zoneId"] for r in graph.of_type(RECORD)} == {PUBLIC_ZONE}


def test_an_internet_facing_fleet_without_a_zone_is_refused_by_name() -> None:
    from gpuinfra.errors import InputError
    from helpers import DELETE, inputs_for

    with pytest.raises(InputError, match="route53_latency needs hosted_zone_id") as info:
        inputs_for("chat-serve", {"global_routing.hosted_zone_id": DELETE})
    assert "global_routing.hosted_zone_id" in str(info.value)


def test_preflight_passes_the_zone_and_its_records_and_refuses_a_broken_one(k8s: Graph) -> None:
    catalog = load_catalog()
    routing = [f for f in preflight(k8s, catalog) if f.type in (ZONE, RECORD)]
    assert routing == []  # judged (not PF-UNCHECKED) and accepted
    zone = the_zone(k8s)
    bad_vpc = {**zone.inputs, "vpcs": [{"vpcId": "vpc-0abc", "vpcRegion": "mars-north-1"}]}
    broken = replace(k8s, resources=tuple(replace(r, inputs=bad_vpc) if r is zone else r for r in k8s.resources))
    found = [f for f in preflight(broken, catalog) if f.type == ZONE]
    assert [(f.rule, f.path) for f in found] == [("PF-AWS-API", "vpcs[0].vpcRegion")], found


@mock_aws
def test_in_moto_the_zone_is_private_and_found_only_from_the_fleet_vpcs(k8s: Graph) -> None:
    client = boto3.client("route53", region_name="us-east-1")
    zone = the_zone(k8s)
    create, *associations = hosted_zone(zone)
    assert create.operation == "CreateHostedZone" and [a.operation for a in associations] == [
        "AssociateVPCWithHostedZone"
    ]
    params = {**create.params, "CallerReference": "test"}
    made = client.create_hosted_zone(**params)["HostedZone"]
    zone_id = made["Id"].rsplit("/", 1)[-1]
    for call in associations:
        client.associate_vpc_with_hosted_zone(**{**call.params, "HostedZoneId": zone_id})
    for r in k8s.of_type(RECORD):
        (call,) = record(r)
        client.change_resource_record_sets(**json.loads(json.dumps(call.params).replace(r.inputs["zoneId"], zone_id)))

    found = client.get_hosted_zone(Id=zone_id)
    assert found["HostedZone"]["Config"]["PrivateZone"] is True
    assert sorted((v["VPCRegion"], v["VPCId"]) for v in found["VPCs"]) == sorted(
        (v["vpcRegion"], v["vpcId"]) for v in zone.inputs["vpcs"]
    )
    for v in zone.inputs["vpcs"]:
        seen = client.list_hosted_zones_by_vpc(VPCId=v["vpcId"], VPCRegion=v["vpcRegion"])["HostedZoneSummaries"]
        assert [z["Name"] for z in seen] == ["chat-k8s.acme.example."]
    elsewhere = client.list_hosted_zones_by_vpc(VPCId="vpc-0elsewhere00000", VPCRegion="us-east-1")
    assert elsewhere["HostedZoneSummaries"] == []  # a VPC not associated does not resolve the name
    names = client.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]
    latency = sorted(s["SetIdentifier"] for s in names if s["Type"] == "A")
    assert latency == ["eu-central-1", "us-east-1"]
