"""The policy pack (policies/) run in-process over a stack's graph, as `pulumi preview --policy-pack`
would run it: the CLI's config reconciliation (config.py) and the analyzer's semantics (inprocess.py).

This module is the glue the pipeline calls: it knows the gpuinfra pack and installs the stack's
facts (spec, plan, organization) the way the pack reads them under the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pulumi_policy import Policy

from gpuinfra.account import AccountFacts
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph
from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan
from gpuinfra.policy.config import PolicyConfig, PolicyMeta, load_config_file, reconcile
from gpuinfra.policy.facts import StackFacts, using
from gpuinfra.policy.rules import PACK_NAME, POLICIES
from gpuinfra.policy.runner import NOT_PRICED, NotApplicable, PolicyRun, diagnostic, run_pack


def meta_of(policy: Policy) -> PolicyMeta:
    schema = policy.config_schema
    level = policy.enforcement_level.value if policy.enforcement_level else "advisory"
    return PolicyMeta(
        policy.name,
        level,
        {k: dict(v) for k, v in (schema.properties if schema else {}).items()},
        tuple(schema.required or ()) if schema else (),
    )


def pack() -> tuple[str, list[Policy]]:
    """The gpuinfra pack's name and policies."""
    return PACK_NAME, list(POLICIES)


def pack_config(path: Path | None = None, given: Mapping[str, object] | None = None) -> dict[str, PolicyConfig]:
    """Schema defaults, overlaid with a config file in the CLI's format (or a mapping), validated."""
    _, policies = pack()
    layer = load_config_file(path) if path is not None else dict(given or {})
    return reconcile([meta_of(p) for p in policies], None, layer)  # type: ignore[arg-type]


def police_stack(
    inputs: Inputs,
    plan: AnyPlan,
    graph: Graph,
    config: Mapping[str, PolicyConfig] | None = None,
    monthly_cost: Any = NOT_PRICED,
    held: AccountFacts | None = None,
) -> PolicyRun:
    """Run the pack over a previewed stack, with the facts of its checked inputs and plan, what its account's
    other stacks hold (`held`, folded by the workspace) and the monthly cost preview priced (None when unknown)."""
    return police(
        graph,
        StackFacts.of(inputs, plan, load_catalog(), held),
        config,
        monthly_cost=monthly_cost,
    )


def police(
    graph: Graph,
    facts: object | None,
    config: Mapping[str, PolicyConfig] | None = None,
    policies: Sequence[Policy] | None = None,
    monthly_cost: Any = NOT_PRICED,
) -> PolicyRun:
    """Run the pack over `graph` with the stack's facts installed (see policies/facts.py)."""
    name, every = pack()
    chosen = list(policies) if policies is not None else every
    with using(facts if isinstance(facts, StackFacts) else None):
        return run_pack(
            graph, chosen, config if config is not None else pack_config(), pack=name, monthly_cost=monthly_cost
        )


__all__ = [
    "NotApplicable",
    "PolicyConfig",
    "PolicyMeta",
    "PolicyRun",
    "diagnostic",
    "meta_of",
    "pack",
    "pack_config",
    "police",
    "police_stack",
]
