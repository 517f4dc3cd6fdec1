"""Preflight: every resource of the graph judged by its cloud's and Kubernetes' own published definitions.

`preflight(graph, catalog)` returns findings (gpuinfra.findings: rule id, resource, property path, value, rule,
source):
what the cloud would refuse (its preflight part, found through the registry: AWS's botocore service models
and CloudFormation schemas), what Kubernetes would reject or prune (its OpenAPI schema), and documented
rules those models cannot express. It reads only the graph and the catalog,
never the Pulumi SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuinfra.preflight.check import preflight

_WHERE = {"preflight": "check"}
"""Loaded on first use (PEP 562): importing the package (the findings' helpers) must not import botocore."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = ["preflight"]
