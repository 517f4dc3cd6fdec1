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
    spec = inputs.spec
    assert isinstance(spec, FinetuneSpec)
    org = inputs.org.org
    account = inputs.account
    stack = inputs.stack.name
    tags = stack_tags("finetune", stack, "gpuinfra:finetune", spec.name, org.default_tags, spec.tags)
    if spec.kueue is not None:
        args = BatchArgs(
            spec=spec,
            plan=plan,
            account_id=account.id,
            checkpoint_uri=spec.kueue.checkpoint_uri,
            kms_key_arn="",
            registry=_registry(org),
            manifest=run_manifest(spec, stack),
        )
        kueue_workloads(args, workload_labels(tags), spec.kueue.kubeconfig_key)
        pulumi.export("local_queue", spec.kueue.queue)
        return None
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
        spec.name,
        BatchArgs(
            spec=spec,
            plan=plan,
            account_id=account.id,
            checkpoint_uri=f"s3://{bucket}/{CHECKPOINT_PREFIX}",
            kms_key_arn=storage.key.arn,
            registry=_registry(org),
            manifest=run_manifest(spec, stack),
        ),
        provider,
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
