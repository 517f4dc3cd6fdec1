"""Typed specs: stack files (training, inference, registry) and the organization file.

Imports nothing else of the project but `errors`; everything downstream reads these models.
"""

from gpuinfra.spec.dataprep import DataprepSpec
from gpuinfra.spec.documents import (
    NAMESPACE,
    ORG_KEY,
    SPEC_MODELS,
    OrgDocument,
    StackDocument,
    Workload,
    WorkloadSpec,
    parse_stack,
    read_org,
    read_stack,
    stack_name,
)
from gpuinfra.spec.finetune import FinetuneSpec
from gpuinfra.spec.inference import FleetRegion, InferenceSpec
from gpuinfra.spec.org import PURPOSE_OF_WORKLOAD, Account, Organization, Registry
from gpuinfra.spec.problems import did_you_mean, shown, with_article
from gpuinfra.spec.registry import RegistrySpec
from gpuinfra.spec.training import TrainingSpec
from gpuinfra.spec.yamlfile import YamlDocument, parse_yaml, read_yaml

__all__ = [
    "NAMESPACE",
    "ORG_KEY",
    "PURPOSE_OF_WORKLOAD",
    "SPEC_MODELS",
    "Account",
    "DataprepSpec",
    "FinetuneSpec",
    "FleetRegion",
    "InferenceSpec",
    "OrgDocument",
    "Organization",
    "Registry",
    "RegistrySpec",
    "StackDocument",
    "TrainingSpec",
    "Workload",
    "WorkloadSpec",
    "YamlDocument",
    "did_you_mean",
    "parse_stack",
    "parse_yaml",
    "read_org",
    "read_stack",
    "read_yaml",
    "shown",
    "stack_name",
    "with_article",
]
