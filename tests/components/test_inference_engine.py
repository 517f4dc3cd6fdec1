"""vLLM's flags follow the spec: read back from the rendered command lines (EC2 user data, Kubernetes args).

Flag names and values are vLLM's engine arguments at the pinned image v0.11.0 (docs/configuration/
engine_args.md; vllm/config/cache.py CacheConfig.cache_dtype: "auto" uses the model data type, "fp8"
stores the cache in FP8)."""

from __future__ import annotations

import base64
import shlex
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.components.inference.engine import engine_args
from gpuinfra.spec.inference import ServedModel
from helpers import cloud_config, example_graph


def model(**overrides: Any) -> ServedModel:
    values: dict[str, Any] = {
        "name": "m",
        "parameters_billion": 8,
        "context_length_tokens": 8192,
        "kv_cache": {"layers": 32, "kv_heads": 8, "head_dim": 128},
        "weights_prefix": "m/v1/",
    }
    return ServedModel.model_validate(values | overrides)


def flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


@pytest.mark.parametrize(
    ("overrides", "kv", "quantization", "dtype"),
    [
        # bf16 weights: cache in the model's dtype (2 bytes), as the planner assumed.
        ({}, "auto", None, "bfloat16"),
        # FP8 weights: the planner's default cache element is 1 byte (plan/memory.py KV_DEFAULT_BYTES).
        ({"precision": "fp8"}, "fp8", "fp8", None),
        # FP8 weights but a bf16 cache asked for explicitly.
        (
            {"precision": "fp8", "kv_cache": {"layers": 32, "kv_heads": 8, "head_dim": 128, "precision": "bf16"}},
            "auto",
            "fp8",
            None,
        ),
        # bf16 weights, FP8 cache.
        ({"kv_cache": {"layers": 32, "kv_heads": 8, "head_dim": 128, "precision": "fp8"}}, "fp8", None, "bfloat16"),
        # int4 weights (AWQ checkpoint named in the spec): fp16 cache by default, the method passed through.
        ({"precision": "int4", "quantization": "awq"}, "auto", "awq", None),
        # An FP8 checkpoint made by llm-compressor carries compressed-tensors in its config.json.
        ({"precision": "fp8", "quantization": "compressed-tensors"}, "fp8", "compressed-tensors", None),
    ],
)
def test_flags_follow_the_spec(overrides: dict[str, Any], kv: str, quantization: str | None, dtype: str | None) -> None:
    args = engine_args(model(**overrides), "/model", 1, load_catalog().engine("vllm"))
    assert flag(args, "--kv-cache-dtype") == kv
    assert flag(args, "--quantization") == quantization
    assert flag(args, "--dtype") == dtype


def test_the_example_fleets_command_line_carries_its_fp8_plan() -> None:
    """chat-serve plans FP8 weights and an FP8 KV cache (64 KiB/token): the server is told both."""
    graph = example_graph("chat-serve")
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        files = cloud_config(base64.b64decode(lt.inputs["userData"]).decode())["write_files"]
        serve = next(f["content"] for f in files if f["path"] == "/usr/local/sbin/gpuinfra-serve")
        line = serve[serve.index("exec docker run") :].replace("\\\n", " ")
        words = shlex.split(line.split("\n")[0])
        image = next(i for i, w in enumerate(words) if "/vllm-openai@" in w)  # from the fleet's ECR, by digest
        after_image = words[image + 1 :]
        assert flag(after_image, "--kv-cache-dtype") == "fp8"
        assert flag(after_image, "--quantization") == "fp8"
        assert flag(after_image, "--max-num-seqs") == "36"  # the stack's max_concurrent_sequences
        assert flag(after_image, "--served-model-name") == "llama-3.1-8b-instruct"


def test_kubernetes_args_carry_the_same_flags() -> None:
    graph = example_graph("chat-serve-k8s")
    deployments = graph.of_type("kubernetes:apps/v1:Deployment")
    assert deployments
    for deployment in deployments:
        container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
        args = container["args"]
        # The example serves bf16 weights with the default (bf16) cache.
        assert flag(args, "--kv-cache-dtype") == "auto" and flag(args, "--dtype") == "bfloat16"
        assert "--port" in args


def test_server_args_are_single_words_in_the_shell_line() -> None:
    """A spec value with spaces or `$` reaches vLLM as one argument (shlex-quoted in the script)."""
    from gpuinfra.pulumi.components.inference.bootstrap import render_scripts
    from node_fakes import server_config as config

    serve = render_scripts(config(8000, engine_args=("--served-model-name", "a b$HOME;x")))["serve"]
    line = serve[serve.index("exec docker run") :].replace("\\\n", " ").split("\n")[0]
    words = shlex.split(line)
    assert words[-2:] == ["--served-model-name", "a b$HOME;x"]
