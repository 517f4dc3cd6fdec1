"""Google's planner part (the cloud registry's `planner`): each Google workload spec to its own planner."""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpTrainingSpec
from gpuinfra.spec import Organization


def plan_workload(spec: Any, org: Organization, catalog: Catalog) -> Any:
    """The plan of one Google workload spec, by its kind."""
    if isinstance(spec, GcpTrainingSpec):
        from gpuinfra.clouds.gcp.plan.training import plan_gcp_training

        return plan_gcp_training(spec, org, catalog)
    if isinstance(spec, GcpInferenceSpec):
        from gpuinfra.clouds.gcp.plan.fleet import plan_fleet

        return plan_fleet(spec, org, catalog)
    raise TypeError(f"no Google planner for {type(spec).__name__}")


__all__ = ["plan_workload"]
