"""Typed specs: stack files (training, inference, registry) and the organization file.

Imports nothing else of the project but `errors`; everything downstream reads these models.
"""

from .documents import (
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
from .inference import FleetRegion, InferenceSpec
from .org import Account, Organization, Registry
from .problems import did_you_mean
from .registry import RegistrySpec
from .training import TrainingSpec
from .yamlfile import YamlDocument, parse_yaml, read_yaml

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
    "stack_name",
]
