"""What an on-premises training stack needs from its site's cluster-wide components, which the site installs once
for every team (a shared cluster has one Kueue Configuration, one JobSet controller, one RDMA device plugin):
declared in the organization file (`onprem_sites.<site>.components`), checked here, never installed by a stack.

Minimum versions are the releases whose upstream CRDs and configuration the stack's objects are checked against
(tests/preflight, ../shared/upstream): Kueue 0.19 (`kueue.x-k8s.io/v1beta2` ResourceFlavor, ClusterQueue,
LocalQueue and Topology, served from 0.19.2's CRDs; topology-aware scheduling beta and on by default since 0.14),
JobSet 0.12 (`jobset.x-k8s.io/v1alpha2`), and k8s-rdma-shared-dev-plugin 1.5.2 (the `linkTypes` selector the
documented site configuration uses). An older release may work; it is not verified, so it is refused. The DCGM
exporter (review finding 21, cluster metrics) is required by presence only: the stack creates nothing that reads its
metrics, so no release is verified against it."""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.spec import Organization, TrainingSpec
from gpuinfra.spec.org import SiteComponents, release_tuple

KUEUE_MINIMUM = "0.19.0"
JOBSET_MINIMUM = "0.12.0"
RDMA_PLUGIN_MINIMUM = "1.5.2"
JOBSET_FRAMEWORK = "jobset.x-k8s.io/jobset"
"""Kueue's integration name for JobSet (pkg/controller/jobs/jobset FrameworkName): without it Kueue ignores
JobSets, which then start unqueued and outside the ClusterQueue's quota."""


@dataclass(frozen=True)
class SiteProblem:
    message: str
    field: str
    """The organization-file field, under onprem_sites.<site>."""
    fix: str


def site_components(spec: TrainingSpec, org: Organization) -> SiteComponents | None:
    site = org.onprem_sites.get(spec.site or "")
    return site.components if site is not None else None


def site_problems(spec: TrainingSpec, org: Organization) -> list[SiteProblem]:
    """Every way the declared site components fall short of what this stack creates (empty: none)."""
    if spec.provider != "onprem" or spec.site not in org.onprem_sites:
        return []
    found = site_components(spec, org)
    if found is None:
        return [_nothing_declared(spec)]
    infiniband = spec.interconnect.type == "infiniband"
    return [
        *_too_old(found),
        *_no_jobset_integration(found),
        *(_rdma_problems(found) if infiniband else []),
        *_metrics_problems(found),
    ]


def _nothing_declared(spec: TrainingSpec) -> SiteProblem:
    rdma = (
        f" and the RDMA shared device plugin (>= v{RDMA_PLUGIN_MINIMUM})"
        if spec.interconnect.type == "infiniband"
        else ""
    )
    return SiteProblem(
        "the site declares no cluster-wide components: the stack creates Kueue queues and a JobSet template "
        "but installs neither Kueue nor JobSet (a shared cluster has one of each)",
        "components",
        f"install Kueue (>= {KUEUE_MINIMUM}, integrating {JOBSET_FRAMEWORK}), JobSet (>= {JOBSET_MINIMUM}){rdma} "
        "and NVIDIA's DCGM exporter "
        f'once for the site (docs/training.md, "Site prerequisites"), then declare them under '
        f"`onprem_sites.{spec.site}.components`",
    )


def _too_old(found: SiteComponents) -> list[SiteProblem]:
    return [
        SiteProblem(
            f"the site's {name} {declared} is older than {minimum}, the oldest release the stack's objects are "
            "verified against",
            f"components.{name}.version",
            f"upgrade the site's {name} to {minimum} or newer, then write `version: '{minimum}'` under "
            f"`components.{name}`",
        )
        for name, declared, minimum in (
            ("kueue", found.kueue.version, KUEUE_MINIMUM),
            ("jobset", found.jobset.version, JOBSET_MINIMUM),
        )
        if release_tuple(declared) < release_tuple(minimum)
    ]


def _no_jobset_integration(found: SiteComponents) -> list[SiteProblem]:
    if JOBSET_FRAMEWORK in found.kueue.frameworks:
        return []
    return [
        SiteProblem(
            f"the site's Kueue does not integrate JobSets ({JOBSET_FRAMEWORK} is not among its frameworks): the "
            "job template would start unqueued, outside the cluster queue's quota",
            "components.kueue.frameworks",
            f"add {JOBSET_FRAMEWORK} to the site's Kueue Configuration integrations.frameworks, then to "
            "`components.kueue.frameworks`",
        )
    ]


def _rdma_problems(found: SiteComponents) -> list[SiteProblem]:
    rdma = found.rdma_shared_device_plugin
    if rdma is None:
        return [
            SiteProblem(
                "an InfiniBand cluster needs the site's RDMA shared device plugin on its GPU nodes; none is declared",
                "components.rdma_shared_device_plugin",
                "install k8s-rdma-shared-dev-plugin for the site (compute rails only) and write "
                f"`rdma_shared_device_plugin: {{version: '{RDMA_PLUGIN_MINIMUM}', resource: rdma/ib}}` under "
                "components",
            )
        ]
    if release_tuple(rdma.version) < release_tuple(RDMA_PLUGIN_MINIMUM):
        return [
            SiteProblem(
                f"the site's RDMA shared device plugin {rdma.version} is older than {RDMA_PLUGIN_MINIMUM}",
                "components.rdma_shared_device_plugin.version",
                f"upgrade it to v{RDMA_PLUGIN_MINIMUM} or newer, then write `version: '{RDMA_PLUGIN_MINIMUM}'` under "
                "`components.rdma_shared_device_plugin`",
            )
        ]
    return []


def _metrics_problems(found: SiteComponents) -> list[SiteProblem]:
    if found.dcgm_exporter is not None:
        return []
    return [
        SiteProblem(
            "the site declares no DCGM exporter: nothing exports the GPUs' metrics (utilization, memory, XID errors, "
            "NVLink), so a slow or failing GPU in the run goes unseen",
            "components.dcgm_exporter",
            "install NVIDIA's dcgm-exporter chart (https://nvidia.github.io/dcgm-exporter/helm-charts, tolerating "
            "the GPU taint) or the GPU Operator with dcgmExporter enabled, and write `dcgm_exporter: {version: "
            "<its chart version>}` under components",
        )
    ]


def fabric_device(spec: TrainingSpec, org: Organization) -> str | None:
    """The extended resource the pods request the fabric as, where the site names it (InfiniBand)."""
    found = site_components(spec, org)
    rdma = found.rdma_shared_device_plugin if found is not None else None
    return rdma.resource if rdma is not None and spec.interconnect.type == "infiniband" else None


__all__ = [
    "JOBSET_FRAMEWORK",
    "JOBSET_MINIMUM",
    "KUEUE_MINIMUM",
    "RDMA_PLUGIN_MINIMUM",
    "SiteProblem",
    "fabric_device",
    "site_components",
    "site_problems",
]
