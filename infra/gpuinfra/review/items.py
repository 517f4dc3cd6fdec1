"""The findings of a stack as a review lists them: one `ReviewItem` per finding of any stage (validators,
preflight, the pack), made one way whether the findings come straight from a preview's stages, from a cached
entry or from a stored report document (read back by `read_findings`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpuinfra.findings import Finding, Level
from gpuinfra.review.diff import ReviewItem


def review_items(stack: str, findings: Iterable[Finding]) -> tuple[ReviewItem, ...]:
    """Each finding as a review item: the pack's in Pulumi's words (mandatory, advisory), the others' levels as
    they are."""
    return tuple(
        ReviewItem(
            stack,
            f.stage,
            f.rule,
            f.level.enforcement if f.stage == "policy" else str(f.level),
            f.where,
            f.message,
        )
        for f in findings
    )


def read_findings(report: Mapping[str, Any]) -> list[Finding]:
    """A stored report's findings (a document `diff` reads): validator findings, the pack's violations when the
    report carries them (`policy.violations`: policy, level mandatory/advisory, resource URN and name, message)
    and preflight findings. A level the vocabulary does not know is read as info (it blocks nothing)."""
    out = [
        Finding(str(f.get("rule")), _level(f.get("level")), str(f.get("path") or ""), str(f.get("message")))
        for f in report.get("findings") or []
    ]
    for v in (report.get("policy") or {}).get("violations") or []:
        if isinstance(v, dict):
            out.append(
                Finding(
                    str(v.get("policy")),
                    _level(v.get("level") or "advisory"),
                    "",
                    str(v.get("message")),
                    stage="policy",
                    urn=str(v.get("resource") or ""),
                    name=str(v.get("resource_name") or ""),
                )
            )
    for f in report.get("preflight") or []:
        if isinstance(f, dict):
            out.append(
                Finding(
                    str(f.get("rule")),
                    _level(f.get("level")),
                    str(f.get("path") or ""),
                    str(f.get("message")),
                    stage="preflight",
                    name=str(f.get("name")),
                )
            )
    return out


def _level(word: object) -> Level:
    try:
        return Level.of(str(word))
    except KeyError:
        return Level.INFO


__all__ = ["read_findings", "review_items"]
