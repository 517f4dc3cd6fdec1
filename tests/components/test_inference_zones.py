"""Zones fail independently: a NAT gateway and a private route table per zone, the S3 gateway endpoint on
each, interface endpoints for every AWS API a replica calls; a private fleet admits its client networks."""

from __future__ import annotations

from collections import defaultdict

from gpuinfra.graph import Graph
from helpers import example_graph, graph_for

REGIONS = ("us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1")
NEEDED = {"ecr.api", "ecr.dkr", "secretsmanager", "monitoring", "autoscaling", "sts"}  # the list, with S3


def per_region(graph: Graph, type_: str) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for r in graph.of_type(type_):
        out[graph.provider_of(r).inputs["region"]].append(r)  # type: ignore[union-attr]
    return out


def test_a_nat_gateway_and_a_route_table_per_zone() -> None:
    graph = example_graph("chat-serve")
    nats = per_region(graph, "aws:ec2/natGateway:NatGateway")
    subnets = per_region(graph, "aws:ec2/subnet:Subnet")
    tables = per_region(graph, "aws:ec2/routeTable:RouteTable")
    for region in REGIONS:
        public = {s.urn.rsplit("::", 1)[-1]: s for s in subnets[region] if "-public-" in s.name}
        assert len(nats[region]) == len(public) >= 2
        # Each NAT sits in a different zone's public subnet.
        assert len({n.inputs["subnetId"] for n in nats[region]}) == len(nats[region])
        private_tables = [t for t in tables[region] if "-private-" in t.name]
        assert len(private_tables) == len(nats[region])
        targets = {t.inputs["routes"][0]["natGatewayId"] for t in private_tables}
        assert len(targets) == len(nats[region])  # each zone's table routes to its own zone's NAT


def test_single_nat_is_a_choice() -> None:
    graph = graph_for("chat-serve", {"nat_gateways": "single"})
    nats = per_region(graph, "aws:ec2/natGateway:NatGateway")
    assert all(len(nats[r]) == 1 for r in REGIONS)


def test_endpoints_for_every_api_a_replica_calls() -> None:
    graph = example_graph("chat-serve")
    for region, found in per_region(graph, "aws:ec2/vpcEndpoint:VpcEndpoint").items():
        services = {e.inputs["serviceName"].removeprefix(f"com.amazonaws.{region}."): e for e in found}
        assert set(services) >= NEEDED and "s3" in services
        assert services["s3"].inputs["vpcEndpointType"] == "Gateway"
        assert len(services["s3"].inputs["routeTableIds"]) >= 2  # every zone's private table
        for name in NEEDED:
            endpoint = services[name].inputs
            assert endpoint["vpcEndpointType"] == "Interface" and endpoint["privateDnsEnabled"] is True
            assert len(endpoint["subnetIds"]) >= 2


def test_a_private_fleet_admits_its_client_networks() -> None:
    graph = graph_for(
        "chat-serve",
        {"access.scheme": "internal", "access.client_cidrs": ["10.20.0.0/16"], "access.waf": None},
    )
    for group in graph.of_type("aws:ec2/securityGroup:SecurityGroup"):
        if group.name.endswith("-net-lb"):
            for rule in group.inputs["ingress"]:
                assert "10.20.0.0/16" in rule["cidrBlocks"] and "0.0.0.0/0" not in rule["cidrBlocks"]


def test_a_private_fleet_fails_over_on_an_alarm_not_an_unreachable_probe() -> None:
    """Route 53 health checkers are outside the VPC (CreateHealthCheck, "Private Hosted Zones"): a private
    fleet's checks follow a CloudWatch alarm on its target group's healthy hosts, in the region's account."""
    graph = graph_for(
        "chat-serve",
        {"access.scheme": "internal", "access.client_cidrs": ["10.20.0.0/16"], "access.waf": None},
    )
    alarms = {
        a.inputs["name"] if a.inputs.get("name") else a.name: a
        for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
        if a.name.endswith("-no-healthy-replica")
    }
    assert len(alarms) == 4
    for alarm in alarms.values():
        assert alarm.inputs["metricName"] == "HealthyHostCount" and alarm.inputs["namespace"] == "AWS/ApplicationELB"
        assert alarm.inputs["comparisonOperator"] == "LessThanThreshold" and alarm.inputs["threshold"] == 1
        assert alarm.inputs["treatMissingData"] == "breaching"  # no data: no healthy replica
        assert set(alarm.inputs["dimensions"]) == {"TargetGroup", "LoadBalancer"}
    checks = graph.of_type("aws:route53/healthCheck:HealthCheck")
    assert len(checks) == 4
    regions = set()
    for check in checks:
        assert check.inputs["type"] == "CLOUDWATCH_METRIC" and "fqdn" not in check.inputs
        assert check.inputs["insufficientDataHealthStatus"] == "Unhealthy"
        regions.add(check.inputs["cloudwatchAlarmRegion"])
    assert regions == set(REGIONS)


def test_a_public_fleet_keeps_https_checks() -> None:
    checks = example_graph("chat-serve").of_type("aws:route53/healthCheck:HealthCheck")
    assert len(checks) == 4 and all(c.inputs["type"] == "HTTPS" for c in checks)
    assert not [
        a
        for a in example_graph("chat-serve").of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
        if a.name.endswith("-no-healthy-replica")
    ]


def test_each_region_gets_its_own_vpc_network() -> None:
    """Default VPCs by region order, 10.(64+i).0.0/16, so the regions can be peered (VPC peering refuses
    overlapping CIDRs); the private /20s are carved from each region's own network."""
    graph = example_graph("chat-serve")
    vpcs = per_region(graph, "aws:ec2/vpc:Vpc")
    assert {region: [v.inputs["cidrBlock"] for v in vpcs[region]] for region in REGIONS} == {
        "us-east-1": ["10.64.0.0/16"],
        "us-west-2": ["10.65.0.0/16"],
        "eu-central-1": ["10.66.0.0/16"],
        "ap-northeast-1": ["10.67.0.0/16"],
    }
    subnets = per_region(graph, "aws:ec2/subnet:Subnet")
    private = sorted(s.inputs["cidrBlock"] for s in subnets["ap-northeast-1"] if "-private-" in s.name)
    assert private == ["10.67.0.0/20", "10.67.16.0/20"]
