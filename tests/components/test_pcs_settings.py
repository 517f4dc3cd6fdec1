"""What AWS PCS accepts, checked against the sources that settle it: the Slurm settings gpuinfra gives the cluster and
its node groups against PCS's allow-lists (review finding 9), and why the node groups carry no instanceHealthChecks
(finding 20): the botocore PCS model and the CloudFormation schema in this venv are read here, not restated."""

from __future__ import annotations

import inspect
import re

import botocore.loaders
import pulumi_aws_native as aws_native
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
from gpuinfra.graph import tokens
from gpuinfra.pulumi.components.training.pcs import (
    CLUSTER_SLURM_SETTINGS,
    INSTANCE_HEALTH_CHECKS_SLURM,
    PCS_CLUSTER_SETTINGS,
    PCS_NODE_GROUP_SETTINGS,
    SCHEMA_CLUSTER_SETTINGS,
)
from gpuinfra.spec.training import Scheduler
from helpers import example_graph


def pcs_model() -> dict:
    return botocore.loaders.Loader().load_service_model("pcs", "service-2")["shapes"]


def test_the_cluster_settings_are_on_pcs_cluster_allow_list() -> None:
    """AWS PCS User Guide, "Custom Slurm settings for AWS PCS clusters" lists TaskProlog and SelectTypeParameters (and
    Prolog, Epilog, ...)."""
    assert set(CLUSTER_SLURM_SETTINGS) <= PCS_CLUSTER_SETTINGS


def test_beyond_the_schema_s_own_text_only_the_task_prolog_is_sent() -> None:
    """The CloudFormation schema documents Prolog, Epilog and SelectTypeParameters for clusters (read here from
    cfn-lint's copy); TaskProlog is the one setting beyond it (User Guide list only, review finding T6; why it stays:
    pcs.py, CLUSTER_SLURM_SETTINGS); the health check moved to a timer on the nodes."""
    schema = dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::PCS::Cluster").schema)
    text = schema["definitions"]["SlurmCustomSetting"]["properties"]["ParameterName"]["description"]
    documented = {name for name in re.findall(r"[A-Z][A-Za-z]+", text.split(":", 1)[1])} - {"and"}
    assert SCHEMA_CLUSTER_SETTINGS == documented == {"Prolog", "Epilog", "SelectTypeParameters"}
    assert set(CLUSTER_SLURM_SETTINGS) - documented == {"TaskProlog"}


def test_no_pcs_job_hook_the_stack_could_use_instead_of_the_task_prolog_exists_yet() -> None:
    """The tripwire for the TaskProlog exception (pcs.py, CLUSTER_SLURM_SETTINGS): the PCS API has job submit plugins
    on the cluster, but the resource the stack creates the cluster with has no property for them; once it has, the
    job environment moves there and TaskProlog leaves the settings."""
    request = pcs_model()["ClusterSlurmConfigurationRequest"]["members"]
    assert "modify the job" in request["jobSubmitPlugins"]["documentation"]
    schema = dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::PCS::Cluster").schema)
    slurm = schema["properties"]["SlurmConfiguration"]["properties"]
    assert "JobSubmitPlugins" not in slurm and "SlurmCustomSettings" in slurm
    native = inspect.getsource(aws_native.pcs.outputs) + inspect.getsource(aws_native.pcs._inputs)
    assert "job_submit" not in native and "jobSubmit" not in native


def test_every_setting_the_example_stack_sends_is_allowed_where_it_is_sent() -> None:
    graph = example_graph("llm-train")
    cluster = graph.one(tokens.PCS_CLUSTER).inputs["slurmConfiguration"]["slurmCustomSettings"]
    assert {s["parameterName"] for s in cluster} <= PCS_CLUSTER_SETTINGS
    for group in graph.of_type(tokens.PCS_NODE_GROUP):
        names = {s["parameterName"] for s in group.inputs["slurmConfiguration"]["slurmCustomSettings"]}
        assert names == {"RealMemory", "Weight"} and names <= PCS_NODE_GROUP_SETTINGS


def test_instance_health_checks_need_slurm_26_05_per_the_pcs_model() -> None:
    doc = pcs_model()["CreateComputeNodeGroupRequest"]["members"]["instanceHealthChecks"]["documentation"]
    assert f"require Slurm version {INSTANCE_HEALTH_CHECKS_SLURM} or later" in doc
    versions = pcs_model()["SchedulerRequest"]["members"]["version"]["documentation"]
    assert INSTANCE_HEALTH_CHECKS_SLURM in re.sub(r"<[^>]+>", "", versions)


def test_the_node_group_resource_cannot_carry_instance_health_checks_yet() -> None:
    """The tripwire: when the pinned CloudFormation schema or pulumi-aws-native gains the property, this fails, and
    pcs.py's INSTANCE_HEALTH_CHECKS_SLURM note says what to do (move to 26.05 and set it on the GPU groups)."""
    schema = dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::PCS::ComputeNodeGroup").schema)
    assert "InstanceHealthChecks" not in schema["properties"]
    assert "NodeLifecycleActions" in schema["properties"]  # the schema is current enough to know the newer members
    args = inspect.signature(aws_native.pcs.ComputeNodeGroup._internal_init).parameters
    assert "instance_health_checks" not in args and "node_lifecycle_actions" in args


def test_the_spec_offers_only_versions_the_stack_is_built_for() -> None:
    field = Scheduler.model_fields["slurm_version"]
    assert INSTANCE_HEALTH_CHECKS_SLURM not in str(field.annotation)
