"""Google's managed Slurm path and Filestore /home validators as CASES, like every other rule's (the registration
test reads them here): each fires on a mutation of an example that Cluster Director or Filestore would refuse, and
stays quiet on the example. The limits are cited in each rule's docstring (hypercomputecluster v1 takes exactly one
network and names whole reservations; Filestore's tiers take capacities on their steps, basic shares at most 16
characters). tests/clouds/test_gcp_slurm.py and test_gcp_filestore.py check the messages and hints."""

from __future__ import annotations

import gpuinfra.spec  # noqa: F401  (first: Google's spec models join the organization's accounts through it)
import pytest
from helpers import DELETE, Case, run_case

SLURM = "llm-train-gcp-slurm"
GKE = "llm-train-gcp"

CASES = [
    Case("gcp-slurm-roce-vpc", SLURM, {"network.roce_vpc": True}),
    Case("gcp-slurm-roce-vpc", SLURM, fires=False),
    Case("gcp-slurm-placement", SLURM, {"compute.placement": "compact"}),
    Case("gcp-slurm-placement", SLURM, fires=False),
    Case(
        "gcp-slurm-reservation-block",
        SLURM,
        {"compute.capacity": {"reservation": "acme-h200-train/reservationBlocks/b1"}},
    ),
    Case("gcp-slurm-reservation-block", SLURM, {"compute.capacity": {"reservation": "acme-h200-train"}}, fires=False),
    Case(
        "gcp-slurm-job-template",
        SLURM,
        {"job": {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "script": "train.py"}},
    ),
    Case("gcp-slurm-job-template", SLURM, fires=False),
    Case("gcp-slurm-settings", SLURM, {"scheduler.slurm": DELETE}),
    Case("gcp-slurm-settings", SLURM, fires=False),
    # zonal Filestore: 1,024-9,984 GiB in 256 GiB steps, so 1,100 is off them
    Case("gcp-filestore-capacity-off-tier", GKE, {"filestore.capacity_gib": 1100}),
    Case("gcp-filestore-capacity-off-tier", GKE, fires=False),
    # a basic tier's share name: at most 16 characters (17 here)
    Case("gcp-filestore-share-name", GKE, {"filestore.tier": "BASIC_HDD", "filestore.share": "home_directories1"}),
    Case(
        "gcp-filestore-share-name",
        GKE,
        {"filestore.tier": "BASIC_HDD", "filestore.share": "home_directories"},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
