"""Many adapters on one served model: the vLLM LoRA flags, the prefetch of each adapter, the memory of the
adapter slots (computed by hand), and the chat-serve fleet serving two adapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan, build_plan
from gpuinfra.pulumi.components.inference.bootstrap import ServerConfig, replica_cloud_init
from gpuinfra.pulumi.components.inference.engine import engine_args
from gpuinfra.spec import InferenceSpec
from helpers import assert_bash_ok, cloud_config, example_data, inputs_for, scripts

ADAPTERS: list[dict[str, Any]] = [
    # Rank 16 on q/k/v/o of Llama-3.1-8B: 32 x 16 x ((4096+4096) x 2 + (4096+1024) x 2) = 13,631,488
    {
        "name": "support",
        "weights_prefix": "adapters/support/v2/",
        "rank": 16,
        "parameters_million": 13.631488,
        "base_model": "llama-3.1-8b-instruct",
    },
    # Rank 8 on q/v: 32 x 8 x ((4096+4096) + (4096+1024)) = 3,407,872
    {
        "name": "legal",
        "weights_prefix": "adapters/legal/v1/",
        "rank": 8,
        "parameters_million": 3.407872,
        "base_model": "llama-3.1-8b-instruct",
    },
]


def spec_with_adapters(**model: Any) -> InferenceSpec:
    raw = example_data("chat-serve")["config"]["gpuinfra:inference"]
    raw["model"] = {**raw["model"], "adapters": ADAPTERS, **model}
    return InferenceSpec.model_validate(raw)


def test_server_command_carries_the_lora_flags() -> None:
    args = engine_args(spec_with_adapters().model, "/model", 1, load_catalog().engine("vllm"))
    at = args.index("--enable-lora")
    # vLLM: --max-loras slots (both adapters), --max-lora-rank 16 (a MaxLoRARanks value covering 16 and 8)
    assert args[at : at + 5] == ["--enable-lora", "--max-loras", "2", "--max-lora-rank", "16"]
    modules = args[args.index("--lora-modules") + 1 :]
    assert modules[:2] == ["support=/adapters/support", "legal=/adapters/legal"]


def test_rank_rounds_up_to_a_value_vllm_accepts() -> None:
    odd = [{**ADAPTERS[0], "rank": 24}]
    args = engine_args(spec_with_adapters(adapters=odd).model, "/model", 1, load_catalog().engine("vllm"))
    assert args[args.index("--max-lora-rank") + 1] == "32"  # 1, 8, 16, 32, ... (vllm/config/lora.py)


def test_adapter_slots_are_counted_in_serving_memory() -> None:
    inputs = inputs_for("chat-serve", {"model.adapters": ADAPTERS})
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(plan, InferencePlan)
    # Two slots at max rank 16, each the larger adapter scaled to rank 16: support 13.63M (rank 16) vs legal
    # 3.41M x 16/8 = 6.82M; 2 slots x 13,631,488 x 2 bytes (16-bit) = 54,525,952.
    assert plan.memory.adapter_bytes == 2 * 13_631_488 * 2
    bare = inputs_for("chat-serve", {"model.adapters": []})
    base = build_plan(bare.spec, bare.org.org, load_catalog())
    assert isinstance(base, InferencePlan)
    assert plan.memory.needed_bytes - base.memory.needed_bytes == 54_525_952


def test_prefetch_fetches_and_serve_mounts_each_adapter(tmp_path: Path) -> None:
    text = replica_cloud_init(
        ServerConfig(
            fleet="chat",
            region="eu-central-1",
            instance_type="g6.xlarge",
            bucket="acme-model-registry-eu-central-1",
            model_prefix="models/",
            weights_prefix="llama/v3/",
            adapters=tuple((a["name"], a["weights_prefix"]) for a in ADAPTERS),
            image="vllm/vllm-openai:v0.11.0",
            server_port=8000,
            engine_args=("--model", "/model"),
            max_sequences=4,
            engine=load_catalog().engine("vllm"),
            launch_heartbeat_seconds=461,
            launch_deadline_seconds=783,
        )
    )
    found = scripts(cloud_config(text))
    for script in found:
        assert_bash_ok(script, tmp_path)
    prefetch, serve = found[0], found[1]
    for adapter in ADAPTERS:
        source = f"s3://acme-model-registry-eu-central-1/models/{adapter['weights_prefix']}"
        target = f'"${{STATE_DIRECTORY:-/var/lib/gpuinfra}}"/adapters/{adapter["name"]}'
        assert f"fetch_verified {source} \\\n  {target}\n" in prefetch
        assert f"adapters/{adapter['name']}/.verified" in serve
    assert '/adapters":/adapters:ro' in serve


def test_duplicate_adapter_names_are_refused() -> None:
    with pytest.raises(ValueError, match="share a name"):
        spec_with_adapters(adapters=[ADAPTERS[0], ADAPTERS[0]])


def test_an_added_adapter_is_a_configuration_roll_not_a_new_fleet(catalog: Any) -> None:
    from gpuinfra.cost import price_graph
    from gpuinfra.review.diff import Snapshot, diff_sides
    from gpuinfra.review.effects import replacements
    from helpers import graph_for

    base = graph_for("chat-serve", {"model.adapters": ADAPTERS[:1]})
    head = graph_for("chat-serve", {"model.adapters": ADAPTERS})

    def snap(g: Any) -> Snapshot:
        return Snapshot(g.stack, g, price_graph(g, catalog), (), {})

    d = diff_sides({base.stack: snap(base)}, {head.stack: snap(head)}, replacements())
    changed = d.stacks[0].resources
    assert changed, "the second adapter must change the replicas' configuration"
    # Nothing added, removed or replaced: the launch templates' user data changes and the groups roll.
    assert {r.action for r in changed} == {"update"}
    templates = [r for r in changed if r.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert templates and all(any(c.path == "userData" for c in r.changes) for r in templates)
