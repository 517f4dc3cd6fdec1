"""A cached stack report's findings read back into the one finding type, so its review items are made the way a
preview makes them from its stages' findings (gpuinfra.review.items)."""

from __future__ import annotations

from gpuinfra.findings import Finding, Level
from gpuinfra.report.model import StackReport


def stored_findings(stack: StackReport) -> list[Finding]:
    """The validator findings, policy violations and preflight findings a stored report carries, in its order."""
    out = [Finding(f.rule, Level.of(f.level), f.path, f.message, f.hint) for f in stack.findings]
    for v in stack.policy.violations if stack.policy else []:
        out.append(
            Finding(
                v.policy,
                Level.of(v.level),
                "",
                v.message,
                stage="policy",
                urn=v.resource or "",
                name=v.resource_name or "",
                description=v.description,
            )
        )
    for p in stack.preflight or []:
        out.append(
            Finding(
                p.rule,
                Level.of(p.level),
                p.path,
                p.message,
                stage="preflight",
                urn=p.urn,
                name=p.name,
                type=p.type,
                value=p.value,
                source=p.source,
            )
        )
    return out


__all__ = ["stored_findings"]
