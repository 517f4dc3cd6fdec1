"""The component trees of the workloads AWS and on-premises stacks share: both clouds' registry entry names
this (`program`), and the workload's own stack module builds it."""

from __future__ import annotations

from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan, DataprepPlan, FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, RegistrySpec, TrainingSpec


def build_workload(inputs: Inputs, plan: AnyPlan) -> None:
    """Create the stack's providers and components, by the workload's kind."""
    if isinstance(inputs.spec, TrainingSpec) and isinstance(plan, TrainingPlan):
        from gpuinfra.pulumi.components.training.stack import build_training

        build_training(inputs, plan)
    elif isinstance(inputs.spec, InferenceSpec) and isinstance(plan, InferencePlan):
        from gpuinfra.pulumi.components.inference.stack import build_inference

        build_inference(inputs, plan)
    elif isinstance(inputs.spec, RegistrySpec) and isinstance(plan, RegistryPlan):
        from gpuinfra.pulumi.components.registry.stack import build_registry

        build_registry(inputs, plan)
    elif isinstance(inputs.spec, FinetuneSpec) and isinstance(plan, FinetunePlan):
        from gpuinfra.pulumi.components.finetune.stack import build_finetune

        build_finetune(inputs, plan)
    elif isinstance(inputs.spec, DataprepSpec) and isinstance(plan, DataprepPlan):
        from gpuinfra.pulumi.components.dataprep.stack import build_dataprep

        build_dataprep(inputs, plan)
    else:
        raise TypeError(f"no program for a {type(inputs.spec).__name__} with a {type(plan).__name__}")


__all__ = ["build_workload"]
