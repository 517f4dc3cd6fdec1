"""Kubernetes on AWS (EKS): a version EKS still runs, with its support window against the run (extended support
costs more; past it EKS upgrades the control plane itself), a pinned node image release, and no image setting
that the node groups would ignore. Dates and releases: catalog eks.yaml (cited)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.catalog.eks import eks_versions
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule

VERSION_FIELD = ("scheduler", "kubernetes_version")


def _eks(spec: TrainingSpec) -> bool:
    return spec.provider == "aws" and spec.scheduler.type == "kubernetes"


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


def _write_version(versions: list[str], which: str) -> str:
    """The edit to the newest of `versions` (Kubernetes minor versions, compared as numbers), naming the rest."""
    if not versions:
        return f"no catalogued version is {which}"
    newest = max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    return f'write `kubernetes_version: "{newest}"` under scheduler (a version {which}: {", ".join(versions)})'


def _rate(catalog: Catalog, key: str) -> str:
    price = catalog.service(key)
    return f"${price.usd:.2f}/hour" if price is not None else "an unknown rate"


@rule(Level.ERROR)
def eks_version_ended(spec: TrainingSpec) -> Iterator[Failure]:
    """EKS creates no cluster at a version past its end of extended support, and upgrades existing ones."""
    support = eks_versions().support(spec.scheduler.kubernetes_version)
    today = _today()
    if _eks(spec) and support is not None and support.tier(today) == "ended":
        yield Failure(
            f"EKS ended support for Kubernetes {support.version} on {support.extended_end}: it creates no new "
            "cluster at it",
            VERSION_FIELD,
            _write_version(
                [v.version for v in eks_versions().versions if v.tier(today) == "standard"],
                f"in standard support on {today}",
            ),
        )


@rule(Level.WARNING)
def eks_standard_support_ends(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """The control plane bills at the extended-support rate once its version leaves standard support, and EKS
    upgrades it (any time, without notice) once extended support ends: both are said when they fall before the
    job's run_days are over (from today), or when the version's dates are unknown."""
    if not _eks(spec):
        return
    version = spec.scheduler.kubernetes_version
    support = eks_versions().support(version)
    if support is None:
        yield Failure(
            f"Kubernetes {version} has no EKS support dates in the catalog: when it bills at the extended-support "
            f"rate ({_rate(catalog, 'eks/cluster_extended')}) and when EKS upgrades it are unknown",
            VERSION_FIELD,
            _write_version([v.version for v in eks_versions().versions], "the catalog dates")
            + ", or add its row to clouds/aws/catalog/data/eks.yaml with its source",
        )
        return
    today = _today()
    days = spec.job.run_days if spec.job is not None else 0
    end = today + datetime.timedelta(days=days)
    if support.tier(today) == "ended" or support.standard_end > end:
        return
    extended = _rate(catalog, "eks/cluster_extended")
    when = (
        f"left standard support on {support.standard_end}"
        if support.standard_end <= today
        else f"leaves standard support on {support.standard_end}, within the {days:g}-day run"
    )
    upgrade = (
        f"; extended support ends {support.extended_end}, within the run, after which EKS upgrades the control "
        "plane at any time"
        if support.extended_end <= end
        else f"; EKS upgrades it after {support.extended_end}"
    )
    newer = [v.version for v in eks_versions().versions if v.standard_end > end]
    yield Failure(
        f"Kubernetes {version} {when}: the control plane bills {extended} (extended support) instead of "
        f"{_rate(catalog, 'eks/cluster')}{upgrade}",
        VERSION_FIELD,
        _write_version(newer, "in standard support for the whole run")
        if newer
        else "plan the control-plane upgrade between runs; no catalogued version stays in standard support "
        "for the whole run",
    )


@rule(Level.ERROR)
def eks_node_release_unknown(spec: TrainingSpec) -> Iterator[Failure]:
    """Every node group pins one EKS-optimized AMI release: a node replaced mid-run boots the driver, EFA and
    kubelet its peers run (an unpinned group takes EKS's latest at creation and differs across groups)."""
    version = spec.scheduler.kubernetes_version
    if _eks(spec) and eks_versions().node_release(version) is None:
        yield Failure(
            f"no EKS-optimized AL2023 AMI release is pinned for Kubernetes {version}",
            VERSION_FIELD,
            _write_version(sorted(eks_versions().node_releases.releases), "with a pinned AMI release")
            + ", or add one to clouds/aws/catalog/data/eks.yaml node_releases from the amazon-eks-ami release notes",
        )


@rule(Level.WARNING)
def image_ignored_on_eks(spec: TrainingSpec) -> Iterator[Failure]:
    """EKS GPU nodes boot the EKS-optimized AL2023 NVIDIA AMI at the pinned release; compute.image_id would be
    silently unused."""
    if _eks(spec) and spec.compute.image_id is not None:
        release = eks_versions().node_release(spec.scheduler.kubernetes_version) or "none pinned"
        yield Failure(
            f"compute.image_id is not used on EKS: the nodes boot the EKS-optimized AL2023 NVIDIA AMI (release "
            f"{release})",
            ("compute", "image_id"),
            "remove `compute.image_id` (the release follows `scheduler.kubernetes_version`)",
        )


@rule(Level.WARNING)
def job_code_not_delivered(spec: TrainingSpec) -> Iterator[Failure]:
    """The job template runs job.script from Lustre: something must put it there. lustre.code_path links an S3
    prefix at <mount>/code (a data repository association with automatic import)."""
    if not _eks(spec) or spec.job is None or spec.lustre is None:
        return
    script = f"{spec.lustre.mount_path}/{spec.job.script}"
    if spec.lustre.code_path is None:
        yield Failure(
            f"nothing puts {script} on Lustre: the job's pods would start without their code",
            ("lustre", "code_path"),
            "write `code_path: s3://<bucket>/<prefix>/` under lustre, the S3 prefix holding the code (linked at "
            f"{spec.lustre.mount_path}/code), and keep `job.script` under code/, or copy the code onto Lustre before "
            "submitting",
        )
    elif not spec.job.script.startswith("code/"):
        yield Failure(
            f"job.script {spec.job.script} is not under code/, where lustre.code_path is linked",
            ("job", "script"),
            f"write `script: code/{spec.job.script}` under job (code/train.py runs s3://.../train.py of code_path)",
        )


__all__ = [
    "eks_node_release_unknown",
    "eks_standard_support_ends",
    "eks_version_ended",
    "image_ignored_on_eks",
    "job_code_not_delivered",
]
