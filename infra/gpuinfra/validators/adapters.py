"""LoRA adapters served beside a model: each one trained on that model."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def adapter_on_another_base(spec: InferenceSpec) -> Iterator[Failure]:
    """An adapter trained on another model: its low-rank matrices are shaped for that model's layers, so the
    server cannot apply it (vLLM checks an adapter's target modules and shapes against the loaded model when it
    loads the adapter: docs, "LoRA Adapters"); caught here rather than as a replica that never serves."""
    for i, adapter in enumerate(spec.model.adapters):
        if adapter.base_model != spec.model.name:
            yield Failure(
                f"adapter {adapter.name} was trained on {adapter.base_model}, not the served {spec.model.name}",
                ("model", "adapters", i, "base_model"),
                f"serve it with its base (`name: {adapter.base_model}` under model), or fine-tune it again on "
                f"{spec.model.name} and write `base_model: {spec.model.name}` in model.adapters[{i}]",
            )


__all__ = ["adapter_on_another_base"]
