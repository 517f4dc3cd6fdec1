"""What a SageMaker endpoint configuration may launch at most: per production variant (and shadow variant), its
ML instance type and the most instances it runs, so cost counts it at that maximum like an Auto Scaling group.

pulumi-aws `aws.sagemaker.EndpointConfiguration` (SageMaker API, CreateEndpointConfig ProductionVariant): a variant
runs `initialInstanceCount` instances of `instanceType`, up to `managedInstanceScaling.maxInstanceCount` when
managed scaling is on; a serverless variant (`serverlessConfig`) launches no instance. Application Auto Scaling
scales a variant up to its scalable target's `maxCapacity` (dimension `sagemaker:variant:DesiredInstanceCount`,
resource id `endpoint/<endpoint>/variant/<variant>`: Application Auto Scaling API, RegisterScalableTarget). The
endpoint's name is often known only at apply, so a target is matched by variant name: the largest counts (never
fewer instances than may run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuinfra.graph.views import as_int, mappings, text

ENDPOINT_CONFIGURATION = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"
TRAINING_JOB = "aws:sagemaker/trainingJob:TrainingJob"
SAGEMAKER_LAUNCHERS = (
    ENDPOINT_CONFIGURATION,
    TRAINING_JOB,
    "aws:sagemaker/hyperParameterTuningJob:HyperParameterTuningJob",
    "aws:sagemaker/notebookInstance:NotebookInstance",
    "aws:sagemaker/app:App",
    "aws:sagemaker/space:Space",
    "aws:sagemaker/domain:Domain",
    "aws:sagemaker/userProfile:UserProfile",
    "aws:sagemaker/algorithm:Algorithm",
    "aws:sagemaker/dataQualityJobDefinition:DataQualityJobDefinition",
    "aws:sagemaker/monitoringSchedule:MonitoringSchedule",
    "aws-native:sagemaker:App",
    "aws-native:sagemaker:Cluster",
    "aws-native:sagemaker:ComputeQuota",
    "aws-native:sagemaker:DataQualityJobDefinition",
    "aws-native:sagemaker:Domain",
    "aws-native:sagemaker:EndpointConfig",
    "aws-native:sagemaker:InferenceComponent",
    "aws-native:sagemaker:InferenceExperiment",
    "aws-native:sagemaker:ModelBiasJobDefinition",
    "aws-native:sagemaker:ModelExplainabilityJobDefinition",
    "aws-native:sagemaker:ModelPackage",
    "aws-native:sagemaker:ModelQualityJobDefinition",
    "aws-native:sagemaker:MonitoringSchedule",
    "aws-native:sagemaker:NotebookInstance",
    "aws-native:sagemaker:ProcessingJob",
    "aws-native:sagemaker:Space",
    "aws-native:sagemaker:UserProfile",
)
"""Every SageMaker type whose inputs name an ML instance type (pulumi-aws and pulumi-aws-native schemas): each runs
on SageMaker's own quotas, per instance type and use, which the organization file does not state."""
SCALABLE_TARGET = "aws:appautoscaling/target:Target"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"


@dataclass(frozen=True)
class Variant:
    name: str
    instance_type: str | None
    """The ML instance type (`ml.g5.xlarge`); None for a serverless variant or when unreadable."""
    most: int | None
    """The most instances it runs; None when it cannot be told (no count, or an unknown input)."""


def _scaled_to(targets: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Variant name -> the largest maxCapacity a SageMaker scalable target gives it."""
    out: dict[str, int] = {}
    for t in targets:
        resource_id = text(t.get("resourceId")) or ""
        if t.get("scalableDimension") != DIMENSION or "/variant/" not in resource_id:
            continue
        variant = resource_id.rsplit("/variant/", 1)[1]
        out[variant] = max(out.get(variant, 0), as_int(t.get("maxCapacity")))
    return out


def variants(props: Mapping[str, Any], targets: Iterable[Mapping[str, Any]] = ()) -> list[Variant]:
    """Each instance-backed variant of an endpoint configuration at its most (serverless ones left out)."""
    scaled = _scaled_to(targets)
    out = []
    for v in mappings(props.get("productionVariants")) + mappings(props.get("shadowProductionVariants")):
        if v.get("serverlessConfig"):
            continue
        name = text(v.get("variantName")) or ""
        counts = [as_int(v.get("initialInstanceCount"), -1), scaled.get(name, -1)]
        managed = v.get("managedInstanceScaling")
        if isinstance(managed, Mapping) and managed.get("status") == "ENABLED":
            counts.append(as_int(managed.get("maxInstanceCount"), -1))
        most = max(counts)
        out.append(Variant(name, text(v.get("instanceType")), most if most >= 0 else None))
    return out


def training_groups(props: Mapping[str, Any]) -> list[Variant]:
    """What a training job runs (SageMaker API, CreateTrainingJob ResourceConfig): `instanceCount` x
    `instanceType`, or each of its heterogeneous `instanceGroups`; named by group (the whole job: no name)."""
    config = props.get("resourceConfig")
    config = config if isinstance(config, Mapping) else {}
    groups = mappings(config.get("instanceGroups")) or [config]
    out = []
    for g in groups:
        count = as_int(g.get("instanceCount"), -1)
        out.append(
            Variant(text(g.get("instanceGroupName")) or "", text(g.get("instanceType")), count if count >= 0 else None)
        )
    return out


__all__ = [
    "DIMENSION",
    "ENDPOINT_CONFIGURATION",
    "SAGEMAKER_LAUNCHERS",
    "SCALABLE_TARGET",
    "TRAINING_JOB",
    "Variant",
    "training_groups",
    "variants",
]
