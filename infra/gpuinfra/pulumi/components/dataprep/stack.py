"""A dataprep stack: the dataprep account's providers, the output and scratch buckets under the stack's key, and
the engine's capacity. Slurm: an AWS PCS cluster built with the training workload's PcsCluster (spot CPU workers,
an on-demand node for the MinHash cluster step, a login node that submits the pipeline). Ray: the workers' role
for IRSA, and on the registered cluster the KubeRay operator, the NodePools, the namespace, service account and
programs (components/dataprep/ray_cluster.py); the RayJob manifests a runner applies (rayjob.py)."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from gpuinfra.catalog import load_catalog
from gpuinfra.load import Inputs
from gpuinfra.plan import DataprepPlan
from gpuinfra.plan.dataprep import LOGIN_TYPE
from gpuinfra.pulumi.components.base import aws_native_provider, aws_provider, stack_tags
from gpuinfra.pulumi.components.dataprep.pipeline import Where, gpu_dedup, render_curator, render_pipeline
from gpuinfra.pulumi.components.dataprep.ray_cluster import DataprepRayCluster, RayClusterArgs, programs
from gpuinfra.pulumi.components.dataprep.ray_nodes import ray_pools
from gpuinfra.pulumi.components.dataprep.slurm import SlurmArgs, dataprep_pcs
from gpuinfra.pulumi.components.dataprep.storage import DataprepStorage, StorageArgs
from gpuinfra.pulumi.components.dataprep.workers import worker_policy
from gpuinfra.pulumi.components.quotas import request_increases
from gpuinfra.spec import DataprepSpec, Organization

WORK = "/scratch/dataprep/"
RAY_WORK = "/tmp/dataprep/"
"""The Ray pods' local working folder (the tokenizer's): the container's own disk, on the node's root volume."""
SLURM_LOGS = "/var/log/dataprep/"
"""Node-local: datatrove's Slurm output files ("must be local", examples/fineweb.py)."""


def cluster_where(spec: DataprepSpec) -> Where:
    """The cluster's locations: S3 in and out, logs and completion markers under the scratch prefix."""
    return Where(
        input=spec.corpus.uri.rstrip("/") + "/",
        scratch=spec.scratch.uri.rstrip("/") + "/",
        output=spec.output.uri.rstrip("/") + "/",
        work=WORK if spec.engine == "datatrove-slurm" else RAY_WORK,
        files=spec.corpus.files,
        slurm_logs=SLURM_LOGS,
    )


def reader_ids(spec: DataprepSpec, org: Organization) -> list[str]:
    return [org.accounts[name].id for name in spec.output.readers if name in org.accounts]


def build_dataprep(inputs: Inputs, plan: DataprepPlan) -> DataprepStorage:
    spec = inputs.spec
    assert isinstance(spec, DataprepSpec)
    org, account, stack = inputs.org.org, inputs.account, inputs.stack.name
    tags = stack_tags("dataprep", stack, "gpuinfra:dataprep", spec.name, org.default_tags, spec.tags)
    session = f"gpuinfra-{stack}"
    provider = aws_provider(f"aws-{spec.account}-{spec.region}", account, spec.region, tags, session)
    storage = DataprepStorage(
        spec.name,
        StorageArgs(
            spec.name,
            account.id,
            spec.output.uri,
            spec.scratch.uri,
            spec.scratch.expire_days,
            reader_ids(spec, org),
        ),
        spec.region,
        provider,
    )
    where = cluster_where(spec)
    pipeline = render_pipeline(spec, where)
    if spec.engine == "datatrove-slurm":
        native = aws_native_provider(f"aws-native-{spec.account}-{spec.region}", account, spec.region, tags, session)
        policy = storage.key.arn.apply(lambda k: worker_policy(spec, k, pcs=True))
        pcs = dataprep_pcs(spec.name, SlurmArgs(spec, plan, pipeline, policy, tags, LOGIN_TYPE), provider, native)
        pulumi.export("cluster_id", pcs.cluster.aws_id)
        pulumi.export("submit", "python /opt/dataprep/pipeline.py slurm  # on the login node")
    else:
        curator = render_curator(spec, where) if gpu_dedup(spec) else None
        role = _ray_role(spec, storage, provider)
        pools = ray_pools(spec, plan, load_catalog())
        DataprepRayCluster(spec.name, RayClusterArgs(spec, plan, pools, programs(pipeline, curator), role.arn, tags))
    if account.request_quota_increases:
        request_increases(spec.name, plan.quotas, {spec.region: provider})
    pulumi.export("output", spec.output.uri)
    return storage


def _ray_role(spec: DataprepSpec, storage: DataprepStorage, provider: pulumi.ProviderResource) -> aws.iam.Role:
    """The Ray pods' role (IRSA: the cluster's OIDC provider, the namespace's service account)."""
    assert spec.ray is not None
    issuer = spec.ray.oidc_provider_arn.split("oidc-provider/", 1)[1]
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": spec.ray.oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": f"system:serviceaccount:{spec.ray.namespace}:{spec.name}",
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ],
    }
    o = pulumi.ResourceOptions(provider=provider)
    role = aws.iam.Role(f"{spec.name}-ray", assume_role_policy=json.dumps(trust, sort_keys=True), opts=o)
    aws.iam.RolePolicy(
        f"{spec.name}-ray-access",
        role=role.id,
        policy=storage.key.arn.apply(lambda k: worker_policy(spec, k, pcs=False)),
        opts=o,
    )
    pulumi.export("ray_role_arn", role.arn)
    return role


__all__ = ["build_dataprep", "cluster_where", "reader_ids"]
