"""A data flow a stack depends on: who (an IAM role of the graph, or a service) does what to which resource.

Stacks declare their flows (the components that create the roles know them); preflight judges each flow by the
identity, resource and key policies of every graph it can see. Plain data, so any stage may carry flows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flow:
    name: str
    """What the flow is for, as an operator would say it ("training uploads weights to the registry")."""
    stack: str
    """The stack that depends on it (its findings are reported there)."""
    principal: str
    """Logical name of an IAM role in one of the graphs, or a service principal (`s3.amazonaws.com`)."""
    action: str
    resource: str
    """The resource ARN; for `key_of` flows, the ARN of the S3 object the key protects."""
    key_of: bool = False
    """The resource is the KMS key that encrypts the S3 object `resource` by its bucket's default encryption:
    the evaluator finds the key, adds kms:ViaService and the encryption context S3 uses."""
    via: str | None = None
    """The region whose S3 endpoint calls KMS (`kms:ViaService`), when it is not the bucket's own."""
    context: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    """The documentation page that says this flow needs this action."""


__all__ = ["Flow"]
