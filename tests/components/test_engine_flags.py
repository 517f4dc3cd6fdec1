"""Each engine's command line for the same plan values, word for word, written out from each engine's own flag
names (sglang/srt/server_args.py; tensorrt_llm/commands/serve.py), not from the code under test."""

from __future__ import annotations

from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.components.inference.engine import engine_args, engine_config
from gpuinfra.spec.inference import ServedModel
from ruamel.yaml import YAML

VLLM, SGLANG, TENSORRT_LLM = (load_catalog().engine(n) for n in ("vllm", "sglang", "tensorrt-llm"))


def model(**overrides: object) -> ServedModel:
    values: dict[str, object] = {
        "name": "llama-3.1-70b",
        "parameters_billion": 70,
        "precision": "fp8",
        "context_length_tokens": 16384,
        "kv_cache": {"layers": 80, "kv_heads": 8, "head_dim": 128},
        "max_concurrent_sequences": 48,
        "gpu_memory_utilization": 0.85,
        "weights_prefix": "llama-70b/v1/",
    }
    return ServedModel.model_validate(values | overrides)


def test_sglang_gets_the_plans_values_under_its_own_names() -> None:
    assert engine_args(model(), "/model", 4, SGLANG, ["--chunked-prefill-size", "4096"]) == [
        "python3", "-m", "sglang.launch_server",
        "--model-path", "/model",
        "--served-model-name", "llama-3.1-70b",
        "--context-length", "16384",
        "--max-running-requests", "48",
        "--mem-fraction-static", "0.85",
        "--tp-size", "4",
        "--quantization", "fp8",
        "--kv-cache-dtype", "fp8_e4m3",  # fp8 weights: the plan sized a one-byte cache
        "--enable-metrics",
        "--host", "0.0.0.0",
        "--port", "8000",
        "--chunked-prefill-size", "4096",  # the spec's server_args last: they win
    ]  # fmt: skip


def test_sglang_keeps_a_bf16_cache_for_bf16_weights() -> None:
    args = engine_args(model(precision="bf16"), "/model", 1, SGLANG, port=9000)
    assert args[args.index("--kv-cache-dtype") + 1] == "auto" and args[args.index("--dtype") + 1] == "bfloat16"
    assert args[args.index("--port") + 1] == "9000"


def test_trtllm_serve_gets_the_plans_values_under_its_own_names() -> None:
    assert engine_args(model(), "/model", 8, TENSORRT_LLM) == [
        "trtllm-serve", "serve", "/model",
        "--served_model_name", "llama-3.1-70b",
        "--host", "0.0.0.0",  # trtllm-serve's default host is localhost
        "--port", "8000",
        "--backend", "pytorch",
        "--max_batch_size", "48",
        "--max_seq_len", "16384",
        "--tp_size", "8",
        "--kv_cache_free_gpu_memory_fraction", "0.85",
        "--config", "/etc/gpuinfra/trtllm.yaml",
    ]  # fmt: skip
    options = YAML(typ="safe").load(engine_config(model(), "tensorrt-llm") or "")
    assert options == {
        "return_perf_metrics": True,
        "enable_iter_perf_stats": True,
        "kv_cache_config": {"free_gpu_memory_fraction": 0.85, "dtype": "fp8"},
    }


def test_vllm_has_no_options_file_and_its_flags_are_unchanged() -> None:
    assert engine_config(model(), "vllm") is None and engine_config(model(), "sglang") is None
    args = engine_args(model(), "/model", 2, VLLM, ["--port", "8080"])
    assert args[:2] == ["--model", "/model"] and args[-2:] == ["--port", "8080"]
    assert args[args.index("--max-num-seqs") + 1] == "48"
    assert args[args.index("--gpu-memory-utilization") + 1] == "0.85"
