"""Every chart and image the Kubernetes stacks install, pinned, in one place: bump deliberately (an upgrade
restarts the add-on's pods, and Kueue/JobSet upgrades change the APIs the stacks emit). The program installs them
(the Kubernetes training clusters' add-ons, dataprep's KubeRay operator) and the pack's `unrecognised-chart`
refuses a Helm release of any other chart, version or repository: the catalog holds them so both read one source.

`checked` is the day the pin was compared with its upstream release (chart repository index or tag);
`newest` is the newest release seen that day, so the README's pins table shows how far behind a pin is.
A pin is held back only where its values/CRDs at the newer release were not reviewed yet.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    name: str
    source: str
    """Chart reference (OCI URL or chart name in `repo`) or image repository."""
    version: str
    checked: str
    newest: str | None
    """None: no release list was available to compare with."""
    repo: str | None = None
    namespace: str = "kube-system"
    note: str = ""

    @property
    def current(self) -> bool | None:
        return None if self.newest is None else self.version == self.newest


CHARTS: dict[str, Pin] = {
    p.name: p
    for p in (
        # Kueue 0.19: TopologyAwareScheduling beta and on by default since 0.14 (pkg/features/kube_features.go);
        # every Kueue CRD serves v1beta2 as its storage version, v1beta1 deprecated.
        Pin(
            "kueue",
            "oci://registry.k8s.io/kueue/charts/kueue",
            "0.19.2",
            "2026-12-03",
            "0.19.2",
            namespace="kueue-system",
        ),
        Pin(
            "jobset",
            "oci://registry.k8s.io/jobset/charts/jobset",
            "0.12.0",
            "2026-12-03",
            "0.12.0",
            namespace="jobset-system",
        ),
        # The EKS user guide (ml-eks-k8s-device-plugin) installs this chart at 0.17.4 with gfd.enabled=true.
        Pin(
            "nvidia-device-plugin",
            "nvidia-device-plugin",
            "0.17.4",
            "2026-12-03",
            "0.20.0",
            repo="https://nvidia.github.io/k8s-device-plugin",
            note="the version the EKS user guide installs; 0.18+ values not reviewed yet",
        ),
        # eks-charts publishes "v"-prefixed chart versions.
        Pin(
            "aws-efa-k8s-device-plugin",
            "aws-efa-k8s-device-plugin",
            "v0.5.7",
            "2026-12-03",
            "v0.5.30",
            repo="https://aws.github.io/eks-charts",
            note="image v0.5.4; newer charts' instance-type list not reviewed yet",
        ),
        Pin(
            "aws-fsx-csi-driver",
            "aws-fsx-csi-driver",
            "1.11.0",
            "2026-12-03",
            "1.17.0",
            repo="https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
            note="driver 1.4.0; upstream supports recent minors only: upgrade",
        ),
    )
}

IMAGES: dict[str, Pin] = {
    p.name: p
    for p in (
        Pin(
            "rdma-shared-dev-plugin",
            "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin",
            "v1.5.2",
            "2026-12-03",
            None,
            note="installed by the site (docs/training.md, Site prerequisites), as in its deployment/k8s/base "
            "manifests; newest release not checked (no index here)",
        ),
        # The NCCL acceptance JobSet's image (acceptance.py): aws-samples/awsome-distributed-training
        # micro-benchmarks/nccl-tests (nccl-tests.Dockerfile: nccl-tests built with MPI=1 at
        # /opt/nccl-tests/build, Open MPI at /opt/amazon/openmpi, the EFA installer with aws-ofi-nccl, openssh
        # with StrictHostKeyChecking off); the tag is the one its buildspec.yaml pushes to public.ecr.aws/hpc-cloud
        # at commit 7217859f (cuda, efa, ofi, nccl and nccl-tests versions).
        Pin(
            "nccl-tests",
            "public.ecr.aws/hpc-cloud/nccl-tests",
            "cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
            "2026-12-04",
            None,
            note="the tag aws-samples/awsome-distributed-training's buildspec.yaml publishes; the registry's "
            "tag list was not read",
        ),
    )
}

OPERATOR_CHART = "kuberay-operator"
OPERATOR_VERSION = "1.7.0"
OPERATOR_REPO = "https://ray-project.github.io/kuberay-helm/"
"""dataprep's KubeRay operator: helm-chart/kuberay-operator/README.md at v1.7.0: `helm repo add kuberay
https://ray-project.github.io/kuberay-helm/` and `helm install kuberay-operator kuberay/kuberay-operator --version
1.7.0`."""


__all__ = ["CHARTS", "IMAGES", "OPERATOR_CHART", "OPERATOR_REPO", "OPERATOR_VERSION", "Pin"]
