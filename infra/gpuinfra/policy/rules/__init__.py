"""gpuinfra's CrossGuard policy pack: separation, quotas, budget, training, inference and security.

`pulumi preview --policy-pack policies` runs it through `policies/__main__.py` (gpuinfra.workspace.pack, which
installs how the stack's facts are read and calls `serve()`);
`gpuinfra preview` runs the same policy objects in-process (infra/gpuinfra/policy/pack.py). Each domain module
declares its policies with `declare.resource_policy` / `declare.stack_policy`; importing the package imports
every domain module, so `POLICIES` is complete without a hand-kept list. A new policy is one decorated
function in the domain module it belongs to.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from pulumi_policy import PolicyPack

from gpuinfra.clouds import CLOUDS
from gpuinfra.policy.rules.declare import REGISTRY

PACK_NAME = "gpuinfra"
DESCRIPTION = "gpuinfra guardrails: training/inference separation, GPU quotas, budgets and safe defaults"
_NOT_DOMAINS = {"declare", "groups", "values"}
"""Helpers of the domain modules."""

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _NOT_DOMAINS:
        importlib.import_module(f"{__name__}.{_module.name}")

for _cloud in CLOUDS.values():
    if _cloud.parts.policies is not None:
        _cloud.part("policies")  # a cloud's own rules join the pack's shared ones on import

POLICIES = list(REGISTRY)


def serve() -> None:
    """Build the pack: under `pulumi preview --policy-pack` this serves gRPC, prints its port and blocks."""
    _record_pinned_organization()
    PolicyPack(name=PACK_NAME, policies=POLICIES, description=DESCRIPTION)


def _record_pinned_organization() -> None:
    """Read the facts from the organization file the pack's config pins. Policies see only their own config,
    but the facts every policy reads must come from the pinned file: the engine sends the whole reconciled
    config in one Configure call before any Analyze (pulumi-policy 1.21, policy.py
    `_PolicyAnalyzerServicer.Configure`), so the pin is recorded there."""
    from google.protobuf import json_format
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    from gpuinfra.policy.facts import pin_organization
    from gpuinfra.policy.rules.trust import BASE_PROPERTY, POLICY, PROPERTY

    configure = _PolicyAnalyzerServicer.Configure

    def recording(self: Any, request: Any, context: Any) -> Any:
        response = configure(self, request, context)
        given = request.policyConfig.get(POLICY)
        properties = json_format.MessageToDict(given.properties) if given is not None else {}
        pin_organization(str(properties.get(PROPERTY, "") or ""), str(properties.get(BASE_PROPERTY, "") or ""))
        return response

    _PolicyAnalyzerServicer.Configure = recording  # type: ignore[method-assign]


__all__ = ["DESCRIPTION", "PACK_NAME", "POLICIES", "serve"]
