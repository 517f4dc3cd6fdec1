"""Pure derivations from spec and catalog: memory fit, racks and power, checkpoint interval, replicas,
quota needs. No Pulumi, no I/O: every function here is a plain function of its arguments."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..catalog import Catalog
from ..spec import InferenceSpec, Organization, RegistrySpec, TrainingSpec, WorkloadSpec
from .inference import InferencePlan, plan_inference
from .quotas import QuotaNeed
from .registry import RegistryPlan, plan_registry
from .training import TrainingPlan, plan_training

Plan = Annotated[TrainingPlan | InferencePlan | RegistryPlan, Field(discriminator="workload")]


def build_plan(spec: WorkloadSpec, org: Organization, catalog: Catalog) -> TrainingPlan | InferencePlan | RegistryPlan:
    if isinstance(spec, TrainingSpec):
        return plan_training(spec, org, catalog)
    if isinstance(spec, InferenceSpec):
        return plan_inference(spec, org, catalog)
    if isinstance(spec, RegistrySpec):
        return plan_registry(spec, org)
    raise TypeError(f"no planner for {type(spec).__name__}")


__all__ = ["InferencePlan", "Plan", "QuotaNeed", "RegistryPlan", "TrainingPlan", "build_plan"]
