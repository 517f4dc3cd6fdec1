"""Pure derivations from spec and catalog: memory fit, racks and power, checkpoint interval, replicas,
quota needs. No Pulumi, no I/O: every function here is a plain function of its arguments."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import cloud_of
from gpuinfra.plan.dataprep import DataprepPlan
from gpuinfra.plan.finetune import FinetunePlan
from gpuinfra.plan.inference import InferencePlan
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.plan.registry import RegistryPlan
from gpuinfra.plan.training import TrainingPlan
from gpuinfra.spec import Organization, WorkloadSpec

AnyPlan = TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan | DataprepPlan
Plan = Annotated[AnyPlan, Field(discriminator="workload")]
_PLAN: TypeAdapter[AnyPlan] = TypeAdapter(Plan)


def build_plan(spec: WorkloadSpec, org: Organization, catalog: Catalog) -> AnyPlan:
    """The plan of `spec`, by the planner its cloud names (the registry's `planner`)."""
    return cloud_of(spec).part("planner")(spec, org, catalog)  # type: ignore[no-any-return]


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
