"""Documented rules the models cannot express, one module per domain; importing them registers them."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight.rules import compute, identity, invariants, routing, scaling, storage  # noqa: F401  (registers the rules)
from gpuinfra.clouds.aws.preflight.rules.base import RULES, Rule, Violation, rule

__all__ = ["RULES", "Rule", "Violation", "rule"]
