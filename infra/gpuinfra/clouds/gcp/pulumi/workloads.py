"""Google's program part (the cloud registry's `program`): each Google workload's component tree."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpTrainingSpec
from gpuinfra.load import Inputs


def build_workload(inputs: Inputs, plan: Any) -> None:
    """Create a Google stack's providers and components, by the workload's kind."""
    if isinstance(inputs.spec, GcpTrainingSpec):
        from gpuinfra.clouds.gcp.pulumi.training.stack import build_gcp_training

        build_gcp_training(inputs, plan)
    elif isinstance(inputs.spec, GcpInferenceSpec):
        from gpuinfra.clouds.gcp.pulumi.stack import build_fleet

        build_fleet(inputs, plan)
    else:
        raise TypeError(f"no Google program for {type(inputs.spec).__name__}")


__all__ = ["build_workload"]
