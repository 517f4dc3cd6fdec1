"""Run every rule that applies to a spec and collect all findings (never just the first)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import CLOUDS, cloud_of
from gpuinfra.spec import Organization, WorkloadSpec
from gpuinfra.validators.base import RULES, Finding, Level, RegisteredRule


def rules_for(spec: WorkloadSpec) -> list[RegisteredRule]:
    return [r for r in RULES.values() if isinstance(spec, r.spec_type)]


def known_rules(ids: Iterable[str] = ()) -> dict[str, RegisteredRule]:
    """The rules by id, with every cloud's when one of `ids` is not yet registered: a cloud's own rules register
    when its `validators` part loads, so an id is told known or unknown (--suppress, a spec's `suppress`) whichever
    stacks this process has met, without loading every cloud's rules when all are known."""
    if not set(ids) <= set(RULES):
        for entry in CLOUDS.values():
            entry.part("validators")
    return RULES


def validate(
    spec: WorkloadSpec,
    plan: Any,
    org: Organization,
    catalog: Catalog,
    config: dict[str, Any] | None = None,
    suppress: Iterable[str] = (),
    account_problems: Iterable[str] = (),
) -> list[Finding]:
    """All findings, sorted by level (errors first) then path; suppressed warnings dropped."""
    cloud_of(spec).part("validators")  # the rules of the spec's cloud register on import
    available: dict[str, Any] = {
        "spec": spec,
        "plan": plan,
        "org": org,
        "account": org.accounts.get(spec.account),
        "catalog": catalog,
        "config": config or {},
        "account_problems": list(account_problems),
    }
    findings: list[Finding] = []
    for registered in rules_for(spec):
        kwargs = {name: available[name] for name in registered.params}
        try:
            findings.extend(
                Finding(registered.id, registered.level, f.path, f.message, f.hint) for f in registered.fn(**kwargs)
            )
        except Exception as exc:  # a crashing rule is a finding, not a traceback
            findings.append(
                Finding(
                    registered.id,
                    Level.ERROR,
                    (),
                    f"validator crashed: {type(exc).__name__}: {exc}",
                    "this is a gpuinfra bug; suppressing is not possible for errors",
                )
            )
    silenced = set(suppress) | set(getattr(spec, "suppress", []))
    kept = [f for f in findings if not (f.rule in silenced and _suppressible(f))]
    return sorted(kept, key=lambda f: (-f.level, f.path.__repr__(), f.rule))


def _suppressible(finding: Finding) -> bool:
    """Warnings, and errors registered suppressible (a crash finding never is)."""
    known = RULES.get(finding.rule)
    crashed = finding.message.startswith("validator crashed:")
    return finding.level < Level.ERROR or (known is not None and known.suppressible and not crashed)


__all__ = ["known_rules", "rules_for", "validate"]
