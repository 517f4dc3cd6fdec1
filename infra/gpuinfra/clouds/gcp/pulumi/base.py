"""What every Google resource of a stack shares: one provider pinned to the project, the labels."""

from __future__ import annotations

import re

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpProject

LABEL = re.compile(r"[^a-z0-9_-]")


def label(value: str) -> str:
    """A Google label value: lower-case letters, digits, '_' and '-', at most 63 characters."""
    return LABEL.sub("-", value.lower())[:63]


def stack_labels(stack: str, spec: GcpInferenceSpec, org_tags: dict[str, str]) -> dict[str, str]:
    """The organization's tags and the spec's labels as Google labels, with gpuinfra's own."""
    base = {label(k): label(v) for k, v in org_tags.items()}
    return {**base, **spec.labels, "gpuinfra-stack": label(stack), "gpuinfra-workload": "inference"}


def provider(name: str, project: GcpProject, labels: dict[str, str]) -> gcp.Provider:
    """The stack's one Google provider: every resource lands in the project the organization file names."""
    return gcp.Provider(name, project=project.id, default_labels=labels)


def opts(parent: pulumi.Resource, **kwargs: object) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, **kwargs)  # type: ignore[arg-type]


__all__ = ["label", "opts", "provider", "stack_labels"]
