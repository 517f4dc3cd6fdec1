"""Pure derivations from spec and catalog: memory fit, racks and power, checkpoint interval, replicas,
quota needs. No Pulumi, no I/O: every function here is a plain function of its arguments."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import cloud_of
from gpuinfra.plan.dataprep import DataprepPlan, plan_dataprep
from gpuinfra.plan.finetune import FinetunePlan, plan_finetune
from gpuinfra.plan.inference import InferencePlan, plan_inference
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.plan.registry import RegistryPlan, plan_registry
from gpuinfra.plan.training import TrainingPlan, plan_training
from gpuinfra.spec import (
    DataprepSpec,
    FinetuneSpec,
    InferenceSpec,
    Organization,
    RegistrySpec,
    TrainingSpec,
    WorkloadSpec,
)
from gpuinfra.spec.target import workload_of

AnyPlan = TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan | DataprepPlan
Plan = Annotated[AnyPlan, Field(discriminator="workload")]
_PLAN: TypeAdapter[AnyPlan] = TypeAdapter(Plan)


def build_plan(spec: WorkloadSpec, org: Organization, catalog: Catalog) -> AnyPlan:
    own = cloud_of(spec).part("planner", workload_of(spec))  # a cloud's own planner; None: the built-in ones
    if own is not None:
        return own(spec, org, catalog)  # type: ignore[no-any-return]
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


def parse_plan(data: Any) -> AnyPlan | None:
    """A plan as a report document carries it (JSON), typed again; None when absent or not a plan (an older
    or foreign document: its stack is then priced without the usage the plan implies)."""
    if not isinstance(data, dict):
        return None
    try:
        return _PLAN.validate_python(data)
    except ValidationError:
        return None


__all__ = [
    "AnyPlan",
    "DataprepPlan",
    "FinetunePlan",
    "InferencePlan",
    "Plan",
    "QuotaNeed",
    "RegistryPlan",
    "TrainingPlan",
    "build_plan",
    "parse_plan",
]
