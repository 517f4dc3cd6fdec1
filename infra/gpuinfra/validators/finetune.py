"""Fine-tuning: the run must fit one node, and a full fine-tune is training."""

from __future__ import annotations

import math
from collections.abc import Iterator

from gpuinfra.plan import FinetunePlan
from gpuinfra.plan.flops import PUBLISHED_MFU_CEILING
from gpuinfra.plan.memory import GB
from gpuinfra.spec import FinetuneSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def finetune_needs_training_stack(spec: FinetuneSpec, plan: FinetunePlan) -> Iterator[Failure]:
    """A full fine-tune, or a run no single node holds, needs the training cluster's sharding and fabric: an AWS
    Batch job on one instance is the wrong tool (plan/finetune.py)."""
    if plan.refusal is None:
        return
    at = ("method",) if spec.method == "full" else ("base_model", "parameters_billion")
    yield Failure(
        f"{plan.refusal}: this run belongs in a training stack (gpuinfra:training), not on a one-node Batch queue",
        at,
        "write a gpuinfra:training stack for it (`gpuinfra init training-pcs` or training-eks), or use method "
        "lora/qlora with a smaller rank, sequence or micro-batch",
    )


@rule(Level.ERROR)
def finetune_does_not_fit(spec: FinetuneSpec, plan: FinetunePlan) -> Iterator[Failure]:
    """The named instance type cannot hold the run (the base, the adapter state and the activations a GPU)."""
    memory = plan.memory
    if plan.refusal is not None or memory is None or memory.fits:
        return
    need = (memory.per_gpu_bytes + memory.reserve_bytes) / GB
    better = plan.cheapest.instance_type if plan.cheapest else None
    yield Failure(
        f"{plan.instance_type} holds {memory.gpu_bytes / GB:.1f} GB a GPU; the run needs {need:.1f} GB "
        f"(base {memory.base_bytes / GB:.1f} GB over {memory.gpus} GPU(s), "
        f"activations {memory.activation_bytes / GB:.1f})",
        ("instance_type",),
        f"write `instance_type: {better}` (the cheapest that fits), or `instance_type: auto`"
        if better
        else "write `instance_type: auto`",
    )


@rule(Level.WARNING)
def finetune_mfu_above_published(spec: FinetuneSpec) -> Iterator[Failure]:
    """run.mfu above every published run of the planner's calibration set at the precision."""
    ceiling = PUBLISHED_MFU_CEILING.get(spec.base_model.precision)
    if spec.run.mfu is None or ceiling is None or spec.run.mfu <= ceiling:
        return
    yield Failure(
        f"run.mfu {spec.run.mfu:.0%} is above the {ceiling:.1%} the best published run reached (docs/planner.md)",
        ("run", "mfu"),
        f"write a measured figure at or below it, e.g. `mfu: {math.floor(ceiling * 100) / 100:g}` under run, or "
        "remove `run.mfu` for the calibrated default",
    )


__all__ = ["finetune_does_not_fit", "finetune_mfu_above_published", "finetune_needs_training_stack"]
