"""AWS's validator rules, registered when the cloud registry loads this module for an AWS stack (validators/runner.py
asks the spec's cloud for its `validators` part): AWS PCS (pcs.py: pinned node images, PCS's regions and sizes,
Capacity Blocks, Lustre sizing) and EKS (eks.py: versions in support, pinned node releases). AWS's stacks are the
workloads it shares with on premises, so the shared rules (gpuinfra.validators) register first."""

from __future__ import annotations

import gpuinfra.validators  # noqa: F401  (the shared rules: AWS's stacks are the shared workloads)
from gpuinfra.clouds.aws.validators import eks, pcs

__all__ = ["eks", "pcs"]
