"""Typed specs: stack files (training, inference, registry) and the organization file.

Imports nothing else of the project but `errors`; everything downstream reads these models.
"""

from infra.spec.documents import (
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
from infra.spec.inference import FleetRegion, InferenceSpec
from infra.spec.org import Account, Organization, Registry
from infra.spec.problems import did_you_mean, shown, with_article
from infra.spec.registry import RegistrySpec
from infra.spec.training import TrainingSpec
from infra.spec.yamlfile import YamlDocument, parse_yaml, read_yaml

__all__ = [
    "NAMESPACE",
    "ORG_KEY",
    "SPEC_MODELS",
    "Account",
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
