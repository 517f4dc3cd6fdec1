"""gpuinfra's CrossGuard policy pack: separation, quotas, budget, training, inference and security.

`pulumi preview --policy-pack policies` runs it through `__main__.py`; `gpuinfra preview` runs the same
policy objects in-process (infra/crossguard). Each domain module declares its policies with
`rules.resource_policy` / `rules.stack_policy`; importing the package imports every domain module, so
`POLICIES` is complete without a hand-kept list.
"""

from __future__ import annotations

import importlib
import pkgutil

from .rules import REGISTRY

PACK_NAME = "gpuinfra"
_NOT_DOMAINS = {"__main__", "facts", "groups", "rules", "values"}
"""Helpers, and the entry point (importing it would start the gRPC server)."""

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _NOT_DOMAINS:
        importlib.import_module(f"{__name__}.{_module.name}")

POLICIES = list(REGISTRY)

__all__ = ["PACK_NAME", "POLICIES"]
