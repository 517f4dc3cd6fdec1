"""Data preparation: the workers write only where the spec declares, never into the raw corpus; a GPU dedup stage
runs only on the Ray engine (NeMo Curator's GPU stages are Ray's)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import DataprepPlan
from gpuinfra.plan.cluster import cluster_for
from gpuinfra.spec import DataprepSpec, Organization
from gpuinfra.spec.org import Account, release_tuple
from gpuinfra.validators.base import Failure, Level, rule


def _inside(child: str, parent: str) -> bool:
    return child.rstrip("/").startswith(parent.rstrip("/") + "/") or child.rstrip("/") == parent.rstrip("/")


@rule(Level.ERROR)
def dataprep_writes_outside_the_corpus(spec: DataprepSpec, plan: DataprepPlan) -> Iterator[Failure]:
    """The raw corpus is read only: an output or scratch prefix inside it (or holding it) would overwrite it."""
    corpus = spec.corpus.uri
    for field, uri in (("output", spec.output.uri), ("scratch", spec.scratch.uri)):
        if _inside(uri, corpus) or _inside(corpus, uri):
            yield Failure(
                f"{field}.uri {uri} overlaps the raw corpus {corpus}: the workers would write into it",
                (field, "uri"),
                f"write `uri: s3://<bucket>/<prefix>/` under {field}: a prefix of its own, outside {corpus}",
            )


@rule(Level.ERROR)
def dataprep_gpu_stage_needs_ray(spec: DataprepSpec, plan: DataprepPlan) -> Iterator[Failure]:
    """A GPU dedup stage (NeMo Curator) runs on Ray; the Slurm engine's node groups are CPU only."""
    if plan.gpu and spec.engine != "datatrove-ray":
        yield Failure(
            "stages.dedup.accelerator gpu runs on the Ray engine; the Slurm engine launches CPU workers only",
            ("stages", "dedup", "accelerator"),
            "write `engine: datatrove-ray`, or `accelerator: cpu` under stages.dedup",
        )


@rule(Level.ERROR)
def dataprep_gpu_stage_not_allowed(
    spec: DataprepSpec, plan: DataprepPlan, account: Account | None
) -> Iterator[Failure]:
    """A GPU dedup stage launches GPU instances in the dataprep account: only one the organization file allows GPUs
    (dataprep-no-accelerators refuses the GPU NodePool at preview; this says so before anything is built)."""
    if plan.gpu and account is not None and not account.allow_accelerators:
        yield Failure(
            f"stages.dedup.accelerator gpu launches {plan.gpu_nodes} x {plan.gpu_instance_type} in account "
            f"{spec.account}, which is not allowed GPUs",
            ("stages", "dedup", "accelerator"),
            f"write `allow_accelerators: true` under accounts.{spec.account} in the organization file, or "
            "`accelerator: cpu` under stages.dedup",
        )


KARPENTER_VERIFIED = "1.14.1"
"""The Karpenter release whose CRDs (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass) the Ray engine's
NodePools are checked against (tests/dataprep/test_ray_stack.py); an older one may not serve them."""


@rule(Level.ERROR)
def dataprep_ray_cluster_registered(spec: DataprepSpec, plan: DataprepPlan, org: Organization) -> Iterator[Failure]:
    """The Ray engine deploys into the cluster its kubeconfig key reaches: one the organization file registers for
    data preparation (separation-kubernetes refuses any other at preview; this says so before anything is built)."""
    if spec.ray is None:
        return
    key = spec.ray.kubeconfig_key
    found = cluster_for(org, key)
    if found is None:
        yield Failure(
            f"ray.kubeconfig_key {key} is no cluster the organization file registers",
            ("ray", "kubeconfig_key"),
            f"register it under the organization file's clusters: `<cluster name>: {{purpose: dataprep, account: "
            f"{spec.account}, kubeconfig_key: '{key}', server: 'https://<api server>'}}`",
        )
    elif found[1].purpose != "dataprep":
        yield Failure(
            f"ray.kubeconfig_key {key} reaches cluster {found[0]}, "
            f"{'an' if found[1].purpose[0] in 'aeiou' else 'a'} {found[1].purpose} cluster",
            ("ray", "kubeconfig_key"),
            "write `kubeconfig_key: <key>` under ray with the key of a cluster the organization file registers with "
            "`purpose: dataprep` (no two workloads share a cluster)",
        )


@rule(Level.ERROR)
def dataprep_karpenter_verified(spec: DataprepSpec, plan: DataprepPlan) -> Iterator[Failure]:
    """The stack's NodePools and EC2NodeClasses are Karpenter v1 objects, checked against 1.14.1's CRDs."""
    if spec.ray is None:
        return
    version = spec.ray.karpenter.version
    if release_tuple(version) < release_tuple(KARPENTER_VERIFIED):
        yield Failure(
            f"Karpenter {version} is older than {KARPENTER_VERIFIED}, whose CRDs the stack's NodePools are checked "
            "against",
            ("ray", "karpenter", "version"),
            f"upgrade the cluster's Karpenter to {KARPENTER_VERIFIED} or later and write `version: "
            f"'{KARPENTER_VERIFIED}'` under ray.karpenter",
        )
