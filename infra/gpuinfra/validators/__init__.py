"""Semantic checks on spec + plan, one module per domain. Each rule is found by importing its module:
nobody keeps a list of rule ids by hand."""

import importlib
import pkgutil

from gpuinfra.validators.base import RULES, Failure, Finding, Level, RegisteredRule, rule
from gpuinfra.validators.runner import rules_for, validate

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("base", "checked", "runner"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "RULES",
    "Failure",
    "Finding",
    "Level",
    "RegisteredRule",
    "rule",
    "rules_for",
    "validate",
]
