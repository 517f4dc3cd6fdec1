"""pulumi-aws-native resources, recorded by the real SDK under the engine, judged by their CloudFormation schema."""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.clouds.aws.preflight.cloudformation import cfn_type
from gpuinfra.graph import Graph
from gpuinfra.preflight import preflight
from gpuinfra.pulumi.engine import run


def _graph(slurm: dict[str, Any], subnet: str = "subnet-0123456789abcdef0") -> Graph:
    def program() -> None:
        import pulumi_aws_native as native

        native.pcs.Cluster(
            "pcs",
            scheduler=native.pcs.SchedulerPropertiesArgs(
                type=native.pcs.ClusterSchedulerPropertiesType.SLURM, version="24.11"
            ),
            size=native.pcs.ClusterSize.SMALL,
            networking=native.pcs.NetworkingPropertiesArgs(
                subnet_ids=[subnet], security_group_ids=["sg-0123456789abcdef0"]
            ),
            slurm_configuration=slurm,
        )

    return run(program, project="gpuinfra", stack="pcs", config={})


def test_the_token_maps_to_its_cloudformation_type() -> None:
    assert cfn_type("aws-native:pcs:Cluster") == "AWS::PCS::Cluster"
    assert cfn_type("aws-native:pcs:NoSuchType") is None


def test_a_valid_pcs_cluster_passes() -> None:
    findings = [f for f in preflight(_graph({"scaleDownIdleTimeInSeconds": 600}), load_catalog()) if f.blocking]
    assert findings == []


def test_a_snake_case_property_and_a_bad_subnet_id_are_caught() -> None:
    # AWS::PCS::Cluster: SlurmConfiguration takes no unknown properties; SubnetIds items match ^subnet-\w{8,17}$.
    graph = _graph({"scale_down_idle_time_in_seconds": 600}, subnet="subnet-1")
    found = {(f.rule, f.path) for f in preflight(graph, load_catalog())}
    assert ("PF-CFN-SCHEMA", "slurmConfiguration") in found
    assert ("PF-CFN-SCHEMA", "networking.subnetIds[0]") in found
