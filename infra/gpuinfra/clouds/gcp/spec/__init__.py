"""Google Cloud's spec models, found by spec/target.py's SPEC_PACKAGES: the fleet and the training cluster a
`cloud: gcp` stack holds, and the project an organization `accounts` entry with `cloud: gcp` describes."""

from __future__ import annotations

from pydantic import BaseModel

from gpuinfra.clouds.gcp.spec.fleet import GcpInferenceSpec
from gpuinfra.clouds.gcp.spec.project import GcpProject
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec

SPEC_MODELS: dict[str, type[BaseModel]] = {"inference": GcpInferenceSpec, "training": GcpTrainingSpec}
ACCOUNT_MODEL = GcpProject

__all__ = ["ACCOUNT_MODEL", "SPEC_MODELS", "GcpInferenceSpec", "GcpProject", "GcpTrainingSpec"]
