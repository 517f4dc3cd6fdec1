"""site-components-missing: Kueue, JobSet, the RDMA device plugin and the DCGM exporter are the site's, declared in
the organization file (onprem_sites.<site>.components); the stack needs Kueue >= 0.19 integrating JobSets
(kueue.x-k8s.io/v1beta2 objects, served by the 0.19.2 CRDs), JobSet >= 0.12, on InfiniBand the RDMA shared device
plugin >= v1.5.2, and NVIDIA's DCGM exporter for the GPUs' metrics (review finding 21)."""

from __future__ import annotations

import pytest
from helpers import DELETE, Case, run_case

SITE = "onprem_sites.dc-east.components"
CASES = [
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={SITE: DELETE},
        message=r"onprem_sites\.dc-east\.components: the site declares no cluster-wide components",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.kueue.version": "0.13.4"},  # serves kueue.x-k8s.io/v1beta1 only (its CRDs)
        message=r"components\.kueue\.version: the site's kueue 0\.13\.4 is older than 0\.19\.0",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.jobset.version": "0.10.1"},
        message=r"the site's jobset 0\.10\.1 is older than 0\.12\.0",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.kueue.frameworks": ["batch/job"]},
        message=r"does not integrate JobSets \(jobset\.x-k8s\.io/jobset",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.rdma_shared_device_plugin": DELETE},
        message="an InfiniBand cluster needs the site's RDMA shared device plugin",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.rdma_shared_device_plugin.version": "v1.4.0"},
        message=r"RDMA shared device plugin v1\.4\.0 is older than 1\.5\.2",
    ),
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.dcgm_exporter": DELETE},
        message=r"components\.dcgm_exporter: the site declares no DCGM exporter",
    ),
    Case("site-components-missing", "llm-train-onprem", fires=False),
    # Newer releases than the minimums pass (compared as numbers: 0.20.0 > 0.19.0, 1.10.0 > 1.5.2).
    Case(
        "site-components-missing",
        "llm-train-onprem",
        org={f"{SITE}.kueue.version": "0.20.0", f"{SITE}.rdma_shared_device_plugin.version": "v1.10.0"},
        fires=False,
    ),
    # A DGX H100 has 224 vCPUs and 2,048 GiB (catalog: the NVIDIA DGX H100 user guide).
    Case("site-allocatable-unknown", "llm-train-onprem", message="sized by the EKS AMI's kubelet reservations"),
    Case(
        "site-allocatable-unknown",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.node_allocatable": {"cpu_millicores": 224001, "memory_mib": 2_000_000}},
        message=r"exceeds a dgx-h100\.system's capacity \(224 vCPUs, 2048 GiB\)",
    ),
    Case(
        "site-allocatable-unknown",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.node_allocatable": {"cpu_millicores": 216000, "memory_mib": 2_000_000}},
        fires=False,
    ),
    # Without InfiniBand no RDMA plugin is needed.
    Case(
        "site-components-missing",
        "llm-train-onprem",
        {"interconnect": {"type": "none"}},
        org={f"{SITE}.rdma_shared_device_plugin": DELETE},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
