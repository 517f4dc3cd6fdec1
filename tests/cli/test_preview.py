"""`gpuinfra preview`: the example runs from the CLI, its JSON is versioned and byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import gpuinfra, write_stack


def test_preview_json_is_versioned_and_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for out in (first, second):
        result = gpuinfra("preview", "llm-train", "--format", "json", "--out", str(out))
        assert result.returncode == 0, result.stderr
    assert first.read_bytes() == second.read_bytes()
    doc = json.loads(first.read_text())
    assert doc["version"] == 1
    (stack,) = doc["stacks"]
    assert stack["stack"] == "llm-train" and stack["workload"] == "training" and stack["account"] == "ml-training"
    types = {r["type"] for r in stack["resources"]}
    assert "aws-native:pcs:ComputeNodeGroup" in types and "aws:fsx/lustreFileSystem:LustreFileSystem" in types
    group = next(r for r in stack["resources"] if r["type"] == "aws-native:pcs:ComputeNodeGroup")
    assert {"urn", "type", "name", "parent", "provider", "inputs"} <= set(group)


def test_preview_table_shows_key_settings() -> None:
    result = gpuinfra("preview", "llm-train")
    assert result.returncode == 0
    for text in ("PCS node groups", "p5.48xlarge", "ONDEMAND", "SPOT", "PERSISTENT_2", "57,600 GiB", "Resources ("):
        assert text in result.stdout


def test_preview_stops_before_the_engine_on_error_findings(tmp_path: Path) -> None:
    spot = {"type": "spot", "on_demand_base": 4}  # llm-train's gang before the review's finding T15
    path = write_stack(tmp_path, "llm-train", spec={"checkpointing": None, "compute.capacity": spot})
    result = gpuinfra("preview", str(path), "--format", "json")
    assert result.returncode == 1
    (stack,) = json.loads(result.stdout)["stacks"]
    assert stack["resources"] is None
    assert [f["rule"] for f in stack["findings"]] == ["spot-without-checkpointing", "gang-on-spot"]


def test_preview_markdown() -> None:
    result = gpuinfra("preview", "llm-train", "--format", "markdown")
    assert result.returncode == 0
    assert result.stdout.startswith("## gpuinfra preview")
    assert "<summary>PCS node groups</summary>" in result.stdout


def test_inference_preview_shows_regions_capacity_warm_pools_and_routing() -> None:
    result = gpuinfra("preview", "chat-serve")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for text in (
        "Instance: g6.xlarge (auto)",
        "cheapest of",
        "g6e.xlarge",
        "warm pool",
        "max spot",
        "price-capacity-optimized",  # the burst row (its cell may wrap after "spot")
        "Global routing",
        "Route 53 latency",
        "HTTPS:443",
    ):
        assert text in out, text
