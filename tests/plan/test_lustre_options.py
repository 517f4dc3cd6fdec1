"""The plan's Lustre options: EFA-enabled and preloaded, each from the spec or its default."""

from __future__ import annotations

import pytest
from helpers import DELETE, checked


@pytest.mark.parametrize(
    ("stack", "mutation", "efa"),
    [
        ("llm-train", {}, True),  # PERSISTENT_2, p5 (a family the FSx guide names), Slurm
        ("llm-train", {"lustre.efa": False}, False),
        ("llm-train-eks", {}, False),  # EKS nodes are not set up as EFA clients by this stack
        ("llm-train", {"compute.instance_type": "p4d.24xlarge"}, False),  # EFA, but not a family the guide names
        ("llm-train", {"lustre.deployment_type": "PERSISTENT_1", "lustre.throughput_mb_s_per_tib": 200}, False),
        # The guide recommends EFA above 10 GBps: 40,800 GiB x 250 MB/s/TiB = 9,961 MB/s stays on TCP, 43,200 GiB
        # (10,547 MB/s) is EFA-enabled.
        ("llm-train", {"lustre.storage_capacity_gib": 40800}, False),
        ("llm-train", {"lustre.storage_capacity_gib": 43200}, True),
    ],
)
def test_efa_default(stack: str, mutation: dict, efa: bool) -> None:
    assert checked(stack, mutation).plan.lustre_efa is efa


@pytest.mark.parametrize(
    ("mutation", "preload"),
    [
        ({}, True),  # dataset_gib 12,000: the file system is sized for it (lustre-too-small)
        ({"lustre.dataset_gib": DELETE}, False),  # an unknown share of the prefix: restoring it all may not fit
        ({"lustre.dataset_gib": DELETE, "lustre.preload": True}, True),
        ({"lustre.preload": False}, False),
    ],
)
def test_preload_default(mutation: dict, preload: bool) -> None:
    assert checked("llm-train", mutation).plan.lustre_preload is preload
