"""gpuinfra's CrossGuard policy pack: separation, quotas, budget, training, inference and security.

`pulumi preview --policy-pack policies` runs it through `policies/__main__.py` (which calls `serve()`);
`gpuinfra preview` runs the same policy objects in-process (infra/gpuinfra/policy/pack.py). Each domain module
declares its policies with `declare.resource_policy` / `declare.stack_policy`; importing the package imports
every domain module, so `POLICIES` is complete without a hand-kept list. A new policy is one decorated
function in the domain module it belongs to.
"""

from __future__ import annotations

import importlib
import pkgutil

from pulumi_policy import PolicyPack

from gpuinfra.policy.rules.declare import REGISTRY

PACK_NAME = "gpuinfra"
DESCRIPTION = "gpuinfra guardrails: training/inference separation, GPU quotas, budgets and safe defaults"
_NOT_DOMAINS = {"declare", "groups", "values"}
"""Helpers of the domain modules."""

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _NOT_DOMAINS:
        importlib.import_module(f"{__name__}.{_module.name}")

POLICIES = list(REGISTRY)


def serve() -> None:
    """Build the pack: under `pulumi preview --policy-pack` this serves gRPC, prints its port and blocks."""
    PolicyPack(name=PACK_NAME, policies=POLICIES, description=DESCRIPTION)


__all__ = ["DESCRIPTION", "PACK_NAME", "POLICIES", "serve"]
