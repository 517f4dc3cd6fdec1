"""Fine-tuning on the existing training cluster: a Kueue LocalQueue feeding the training ClusterQueue, and a Job
template users `kubectl create -f` (Kueue admits a suspended Job labelled with its queue: Kueue docs, "Run a
Kubernetes Job", kueue.x-k8s.io/queue-name).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpuinfra.plan import FinetunePlan
from gpuinfra.pulumi.components.finetune.batch import BatchArgs, job_environment
from gpuinfra.pulumi.components.kueue import local_queue
from gpuinfra.pulumi.components.training.kubernetes import device_toleration
from gpuinfra.spec import FinetuneSpec

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def job_template(spec: FinetuneSpec, plan: FinetunePlan, env: dict[str, str], labels: dict[str, str]) -> str:
    """A batch/v1 Job with generateName (so `kubectl create`, not apply), suspended for Kueue to admit, one pod
    asking for the planned GPUs; the pod's restarts are Kueue's and the Job's (backoffLimit), the checkpoint
    contract is training's (SIGTERM, then the grace period). The pod tolerates the accelerator taint the
    training cluster's nodes carry (`device_toleration`), or it would never schedule there."""
    assert spec.kueue is not None
    resource = spec.kueue.gpu_resource or plan.device_resource
    assert resource, "a refused or accelerator-less plan builds no workload"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "generateName": f"{spec.name}-",
            "namespace": spec.kueue.namespace,
            "labels": {**labels, QUEUE_LABEL: spec.kueue.queue},
        },
        "spec": {
            "suspend": True,
            "backoffLimit": 10,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 110,
                    "tolerations": [device_toleration(resource)],
                    "containers": [
                        {
                            "name": "finetune",
                            "image": spec.image,
                            "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
                            "resources": {"limits": {resource: plan.gpus}},
                        }
                    ],
                },
            },
        },
    }
    return yaml.safe_dump(job, sort_keys=False)


def kueue_workloads(args: BatchArgs, labels: dict[str, str], kubeconfig_key: str) -> None:
    spec = args.spec
    assert spec.kueue is not None
    namespace, _, short = kubeconfig_key.rpartition(":")
    provider = k8s.Provider(
        f"k8s-{spec.name}",
        kubeconfig=pulumi.Config(namespace or None).require_secret(short),
        enable_server_side_apply=True,
    )
    o = pulumi.ResourceOptions(provider=provider)
    local_queue(spec.name, spec.kueue.queue, spec.kueue.namespace, spec.kueue.cluster_queue, labels, o)
    k8s.core.v1.ConfigMap(
        f"{spec.name}-job-template",
        metadata={"name": f"{spec.name}-job-template", "namespace": spec.kueue.namespace, "labels": labels},
        data={"job.yaml": job_template(spec, args.plan, job_environment(args), labels)},
        opts=o,
    )


__all__ = ["QUEUE_LABEL", "job_template", "kueue_workloads"]
