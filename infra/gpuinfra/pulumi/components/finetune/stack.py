"""A fine-tuning stack: the training account's provider, a checkpoint bucket under its own key, the Batch queue."""

from __future__ import annotations

import pulumi

from gpuinfra.load import Inputs
from gpuinfra.plan import FinetunePlan
from gpuinfra.plan.lineage import run_manifest
from gpuinfra.pulumi.components.base import aws_provider, stack_tags
from gpuinfra.pulumi.components.finetune.batch import BatchArgs, BatchQueue
from gpuinfra.pulumi.components.finetune.kueue import kueue_workloads
from gpuinfra.pulumi.components.quotas import request_increases
from gpuinfra.pulumi.components.training.alarms import AlarmArgs, StackAlarms
from gpuinfra.pulumi.components.training.cluster import workload_labels
from gpuinfra.pulumi.components.training.storage import StorageArgs, TrainingStorage
from gpuinfra.spec import FinetuneSpec, Organization

CHECKPOINT_PREFIX = "checkpoints/"
CHECKPOINT_RETENTION_DAYS = 14
"""Days a superseded checkpoint stays (training's default, spec/training.py Checkpointing.retention_days)."""


class FinetuneStorage(TrainingStorage):
    """Training's checkpoint bucket and key (no Lustre), as a component of the fine-tuning workload."""

    component_type = "gpuinfra:finetune:Storage"


def _registry(org: Organization) -> tuple[str, str, str, str, str] | None:
    registry = org.registry
    if registry is None:
        return None
    account_id = org.accounts[registry.account].id
    return registry.bucket, registry.upload_prefix, registry.model_prefix, account_id, registry.region


def build_finetune(inputs: Inputs, plan: FinetunePlan) -> BatchQueue | None:
    """The workload on Kueue (the training cluster's queue) when the spec names one, else on its own Batch queue."""
    spec = inputs.spec
    assert isinstance(spec, FinetuneSpec)
    tags = stack_tags(
        "finetune", inputs.stack.name, "gpuinfra:finetune", spec.name, inputs.org.org.default_tags, spec.tags
    )
    if spec.kueue is not None:
        _on_kueue(inputs, spec, plan, tags)
        return None
    return _on_batch(inputs, spec, plan, tags)


def _args(
    inputs: Inputs, spec: FinetuneSpec, plan: FinetunePlan, checkpoint_uri: str, kms_key_arn: pulumi.Input[str]
) -> BatchArgs:
    return BatchArgs(
        spec=spec,
        plan=plan,
        account_id=inputs.account.id,
        checkpoint_uri=checkpoint_uri,
        kms_key_arn=kms_key_arn,
        registry=_registry(inputs.org.org),
        manifest=run_manifest(spec, inputs.stack.name),
    )


def _on_kueue(inputs: Inputs, spec: FinetuneSpec, plan: FinetunePlan, tags: dict[str, str]) -> None:
    """Kueue workloads on the training cluster, checkpointing where the cluster's own checkpoints go."""
    assert spec.kueue is not None
    kueue_workloads(
        _args(inputs, spec, plan, spec.kueue.checkpoint_uri, ""), workload_labels(tags), spec.kueue.kubeconfig_key
    )
    pulumi.export("local_queue", spec.kueue.queue)


def _on_batch(inputs: Inputs, spec: FinetuneSpec, plan: FinetunePlan, tags: dict[str, str]) -> BatchQueue:
    """The stack's own provider, checkpoint bucket and key, Batch queue, alarms and quota requests."""
    account, stack = inputs.account, inputs.stack.name
    provider = aws_provider(f"aws-{spec.account}-{spec.region}", account, spec.region, tags, f"gpuinfra-{stack}")
    bucket = f"{spec.name}-checkpoints"
    storage = FinetuneStorage(
        spec.name,
        StorageArgs(
            checkpoint_bucket=bucket,
            checkpoint_prefix=CHECKPOINT_PREFIX,
            retention_days=CHECKPOINT_RETENTION_DAYS,
            account_id=account.id,
            lustre=None,
            subnet_id="",
            security_group_id="",
            kms_alias=f"alias/gpuinfra-{spec.name}",
            protect=spec.protect_data,
        ),
        provider,
    )
    queue = BatchQueue(
        spec.name, _args(inputs, spec, plan, f"s3://{bucket}/{CHECKPOINT_PREFIX}", storage.key.arn), provider
    )
    if account.alerts is not None:  # alarms only where someone receives them
        StackAlarms(
            f"{spec.name}-alarms",
            AlarmArgs(stack, account.id, account.alerts, spec.name, batch_queue_arn=queue.job_queue.arn),
            provider,
            workload="finetune",
        )
    if account.request_quota_increases:
        request_increases(spec.name, plan.quotas, {spec.region: provider})
    pulumi.export("job_queue", queue.job_queue.name)
    pulumi.export("job_definition", queue.job_definition.name)
    return queue


__all__ = ["FinetuneStorage", "build_finetune"]
