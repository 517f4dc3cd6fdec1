"""The planner of the workloads AWS and on-premises stacks share (training, inference, registry, fine-tuning,
data preparation): both clouds' registry entry names it (`planner`); the cloud-specific figures (quota codes,
sites) come from the spec's target and the catalog."""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.plan.dataprep import plan_dataprep
from gpuinfra.plan.finetune import plan_finetune
from gpuinfra.plan.inference import plan_inference
from gpuinfra.plan.registry import plan_registry
from gpuinfra.plan.training import plan_training
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, Organization, RegistrySpec, TrainingSpec


def plan_workload(spec: Any, org: Organization, catalog: Catalog) -> Any:
    """The plan of one workload spec, by its kind."""
    if isinstance(spec, TrainingSpec):
        return plan_training(spec, org, catalog)
    if isinstance(spec, InferenceSpec):
        return plan_inference(spec, org, catalog)
    if isinstance(spec, RegistrySpec):
        return plan_registry(spec, org)
    if isinstance(spec, FinetuneSpec):
        return plan_finetune(spec, org, catalog)
    if isinstance(spec, DataprepSpec):
        return plan_dataprep(spec, org, catalog)
    raise TypeError(f"no planner for {type(spec).__name__}")


__all__ = ["plan_workload"]
