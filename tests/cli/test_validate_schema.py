"""`gpuinfra validate` and `gpuinfra schema` through the real console entry point."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from gpuinfra.spec import read_yaml
from helpers import STACKS, gpuinfra, write_stack


def test_validate_examples_exit_0() -> None:
    result = gpuinfra("validate", "llm-train", "chat-serve", "model-registry")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "findings: none" in result.stdout
    assert "Checkpointing" in result.stdout and "Instance: g6.xlarge (auto)" in result.stdout


LATEST = "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"


def test_validate_error_finding_exits_1(tmp_path: Path) -> None:
    """A `latest` image for training nodes is an error with a hint (exit 1)."""
    path = write_stack(tmp_path, "llm-train", spec={"compute.image_id": LATEST})
    result = gpuinfra("validate", str(path))
    assert result.returncode == 1
    assert "image-not-pinned" in result.stdout and "describe-images" in result.stdout


def test_validate_json_carries_findings_and_plan(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"compute.image_id": LATEST})
    result = gpuinfra("validate", str(path), "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["version"] == 1
    (stack,) = doc["stacks"]
    (finding,) = stack["findings"]
    assert finding["rule"] == "image-not-pinned" and finding["level"] == "error"
    assert finding["path"] == "compute.image_id" and finding["line"] > 1
    assert stack["plan"]["pcs_size"] == "SMALL" and stack["plan"]["racks"] is None


@pytest.mark.parametrize(
    "args",
    [("does-not-exist",), ("validate", "--suppress", "no-such-rule", "llm-train")],
)
def test_usage_and_unknown_ids_exit_2(args: tuple[str, ...]) -> None:
    result = gpuinfra(*args) if args[0] == "validate" else gpuinfra("validate", *args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout


def test_bad_input_exits_2_without_traceback(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"compute.node_count": "many"})
    result = gpuinfra("validate", str(path))
    assert result.returncode == 2
    assert "compute.node_count" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_schema_validates_the_example_stacks_and_org(tmp_path: Path) -> None:
    stack_schema = json.loads(gpuinfra("schema", "stack").stdout)
    org_schema = json.loads(gpuinfra("schema", "org").stdout)
    for path in sorted(STACKS.glob("Pulumi.*.yaml")):
        jsonschema.validate(read_yaml(path).data, stack_schema)
    jsonschema.validate(read_yaml(STACKS / "org.yaml").data, org_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"config": {"gpuinfra:training": {"name": "x", "bogus": 1}}}, stack_schema)


def test_schema_describes_fields() -> None:
    schema = json.loads(gpuinfra("schema").stdout)
    racks = schema["$defs"]["Racks"]["properties"]
    assert "total facility power" in racks["pue"]["description"]
    assert schema["$defs"]["Lustre"]["properties"]["deployment_type"]["x-update-policy"] == "replace"
