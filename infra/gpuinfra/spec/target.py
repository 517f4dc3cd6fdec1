"""Where a workload runs, as one typed value every stage reads instead of guessing from a spec's fields: the
cloud (or on premises), the account (an AWS account, a Google Cloud project, an on-premises site's owner) and
the regions. Stages that depend on the cloud look it up in the cloud registry (gpuinfra.clouds) by `cloud`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cloud = Literal["aws", "onprem"]
"""The clouds the specs can target (each with its package in gpuinfra.clouds)."""


@dataclass(frozen=True)
class Target:
    cloud: Cloud
    account: str
    """The organization file's account name."""
    regions: tuple[str, ...] = ()
    """The regions the workload's resources live in (none on premises, or when the organization sets them)."""


__all__ = ["Cloud", "Target"]
