"""A side's findings judged by the team's policy configuration and suppressions, the way `preview` judges them:
`diff --policy-config FILE --suppress RULE` on recorded documents gives the verdict `preview` would give.

A policy violation takes the level the reconciled pack config gives its policy (disabled: dropped; remediate:
not blocking, as Pulumi applies the fix instead of failing); a validator warning whose rule is suppressed is
dropped (errors never are, as in validators/runner.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from gpuinfra.policy.config import PolicyConfig
from gpuinfra.review.diff import ReviewItem
from gpuinfra.review.documents import Side

NOT_BLOCKING = {"remediate": "advisory"}


def judged(
    finding: ReviewItem, policies: Mapping[str, PolicyConfig] | None, suppress: frozenset[str]
) -> ReviewItem | None:
    """The finding at the level the configuration gives it, or None when the configuration drops it."""
    if finding.source == "validator" and finding.rule in suppress and finding.level != "error":
        return None
    if finding.source == "policy" and policies is not None and finding.rule in policies:
        level = policies[finding.rule].level
        if level == "disabled":
            return None
        return replace(finding, level=NOT_BLOCKING.get(level, level))
    return finding


def with_levels(side: Side, policies: Mapping[str, PolicyConfig] | None, suppress: Iterable[str]) -> Side:
    """The side with every stack's findings judged (policies None: the levels the documents recorded)."""
    silenced = frozenset(suppress)
    if policies is None and not silenced:
        return side
    stacks = {}
    for name, snap in side.stacks.items():
        kept = (judged(f, policies, silenced) for f in snap.findings)
        stacks[name] = replace(snap, findings=tuple(f for f in kept if f is not None))
    return replace(side, stacks=stacks)


__all__ = ["judged", "with_levels"]
