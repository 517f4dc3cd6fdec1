"""A training stack: the account's provider for the cluster's region, the cluster, quota requests."""

from __future__ import annotations

import pulumi

from gpuinfra.load import Inputs
from gpuinfra.plan import TrainingPlan
from gpuinfra.pulumi.components.base import aws_native_provider, aws_provider, stack_tags
from gpuinfra.pulumi.components.quotas import request_increases
from gpuinfra.pulumi.components.training.cluster import ClusterArgs, TrainingCluster
from gpuinfra.spec import TrainingSpec


def build_training(inputs: Inputs, plan: TrainingPlan) -> TrainingCluster | None:
    spec = inputs.spec
    assert isinstance(spec, TrainingSpec)
    org = inputs.org.org
    account = inputs.account
    stack = inputs.stack.name
    tags = stack_tags("training", stack, "gpuinfra:cluster", spec.name, org.default_tags, spec.tags)
    if spec.provider == "onprem":
        from gpuinfra.plan.site import fabric_device, site_components
        from gpuinfra.pulumi.components.training.onprem import onprem_workloads

        components = site_components(spec, org)
        conditions = tuple(components.node_problem_conditions) if components else ()
        onprem_workloads(spec, plan, tags, fabric_device(spec, org) or "", conditions)
        pulumi.export("cluster", spec.name)
        return None
    assert spec.region is not None
    provider = aws_provider(f"aws-{spec.account}-{spec.region}", account, spec.region, tags, f"gpuinfra-{stack}")
    native = (
        aws_native_provider(f"aws-native-{spec.account}-{spec.region}", account, spec.region, tags, f"gpuinfra-{stack}")
        if spec.scheduler.type == "slurm"
        else None
    )
    registry = org.registry
    cluster = TrainingCluster(
        spec.name,
        ClusterArgs(
            spec=spec,
            plan=plan,
            account=account,
            registry=registry,
            registry_account_id=org.accounts[registry.account].id if registry else None,
            tags=tags,
        ),
        provider,
        native=native,
    )
    if account.request_quota_increases:
        request_increases(spec.name, plan.quotas, {spec.region: provider})
    pulumi.export("cluster", spec.name)
    pulumi.export("checkpoint_bucket", cluster.storage.bucket.bucket)
    return cluster


__all__ = ["build_training"]
