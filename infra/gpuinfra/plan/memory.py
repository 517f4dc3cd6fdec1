"""Will the model fit? Training state sharded over all GPUs; serving weights plus KV cache per replica."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from gpuinfra.spec.training import TrainedModel

GB = 10**9
MIB = 1024**2

# Bytes per parameter of training state, as in the ZeRO paper's accounting (2 + 2 + K)·Ψ:
# low-precision weights (2) + gradients (2) + fp32 master weights (4) + optimizer states.
# fp32 training keeps 4-byte weights and gradients and no master copy: the same totals.
OPTIMIZER_STATE_BYTES = {"adam": 8, "adamw": 8, "sgd_momentum": 4, "adafactor": 0}
WEIGHTS_GRADS_MASTER_BYTES = {"fp32": 8, "bf16": 8, "fp16": 8, "fp8": 8}
SERVING_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
# A quantized-weight server (int8/int4) keeps its KV cache in fp16 unless told otherwise.
KV_DEFAULT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 2.0, "int4": 2.0}


class Plain(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def training_bytes_per_parameter(precision: str, optimizer: str) -> int:
    """16 for mixed-precision Adam (2 + 2 + 12), 12 for SGD with momentum, 8 for Adafactor."""
    return WEIGHTS_GRADS_MASTER_BYTES[precision] + OPTIMIZER_STATE_BYTES[optimizer]


class TrainingMemory(Plain):
    bytes_per_parameter: int
    total_bytes: int
    """Weights, gradients and optimizer state of the whole model, before activations."""
    gpus: int
    per_gpu_bytes: int
    """Fully sharded (ZeRO-3 / FSDP) over every GPU of the cluster."""
    gpu_bytes: int
    usable_bytes_per_gpu: int
    """GPU memory minus the activation headroom."""
    fits: bool


def training_memory(
    parameters_billion: float,
    precision: str,
    optimizer: str,
    gpus: int,
    gpu_memory_mib: int,
    activation_headroom_fraction: float,
) -> TrainingMemory:
    bpp = training_bytes_per_parameter(precision, optimizer)
    total = round(parameters_billion * 1e9 * bpp)
    per_gpu = -(-total // gpus)
    gpu_bytes = gpu_memory_mib * MIB
    usable = int(gpu_bytes * (1 - activation_headroom_fraction))
    return TrainingMemory(
        bytes_per_parameter=bpp,
        total_bytes=total,
        gpus=gpus,
        per_gpu_bytes=per_gpu,
        gpu_bytes=gpu_bytes,
        usable_bytes_per_gpu=usable,
        fits=per_gpu <= usable,
    )


def model_memory(model: TrainedModel, gpus: int, gpu_memory_mib: int) -> TrainingMemory:
    """The training state of a spec's model (every cloud's training spec has one), fully sharded over `gpus` GPUs
    of `gpu_memory_mib` each."""
    return training_memory(
        model.parameters_billion,
        model.precision,
        model.optimizer,
        gpus,
        gpu_memory_mib,
        model.activation_headroom_fraction,
    )


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, element_bytes: float) -> int:
    """2 (K and V) x layers x KV heads x head dim x bytes: Llama-3.1-70B at fp16 is 327,680."""
    return round(2 * layers * kv_heads * head_dim * element_bytes)


class ServingMemory(Plain):
    weights_bytes: int
    kv_bytes_per_token: int
    kv_cache_bytes: int
    """KV cache of `concurrent_sequences` sequences at full context length: the plan asks for one, vLLM's
    admission rule (plan/roofline.py serving_admits); concurrency comes from the mean context instead."""
    needed_bytes: int
    adapter_bytes: int = 0
    """GPU slots of the LoRA adapters one batch may mix (plan/adapters.py lora_slot_bytes)."""


def serving_memory(
    parameters_billion: float,
    precision: str,
    layers: int,
    kv_heads: int,
    head_dim: int,
    kv_precision: str | None,
    context_length_tokens: int,
    concurrent_sequences: int = 1,
    adapter_bytes: int = 0,
) -> ServingMemory:
    weights = round(parameters_billion * 1e9 * SERVING_BYTES[precision])
    element = SERVING_BYTES[kv_precision] if kv_precision else KV_DEFAULT_BYTES[precision]
    per_token = kv_bytes_per_token(layers, kv_heads, head_dim, element)
    kv = per_token * context_length_tokens * concurrent_sequences
    return ServingMemory(
        weights_bytes=weights,
        kv_bytes_per_token=per_token,
        kv_cache_bytes=kv,
        adapter_bytes=adapter_bytes,
        needed_bytes=weights + kv + adapter_bytes,
    )


def usable_accelerator_bytes(accelerator_count: int, memory_mib: int, utilization: float) -> int:
    """What a server may use of one instance's accelerators (vLLM's gpu_memory_utilization)."""
    return int(accelerator_count * memory_mib * MIB * utilization)


__all__ = [
    "GB",
    "Plain",
    "ServingMemory",
    "TrainingMemory",
    "kv_bytes_per_token",
    "model_memory",
    "serving_memory",
    "training_bytes_per_parameter",
    "training_memory",
    "usable_accelerator_bytes",
]
