"""Pieces of text the diff renderers share (terminal and Markdown): markers, a change's before and after cut
to a table cell, effects and icons, the headline. They only format: every number comes from the report."""

from __future__ import annotations

import base64
import binascii
import json
from decimal import Decimal
from typing import Any

from gpuinfra.report.format import money, signed_money
from gpuinfra.report.model import DataLossOut, DiffReport, FindingChangeOut, PropertyChangeOut, ResourceChangeOut
from gpuinfra.report.templates import unpacked

MARKER = "<!-- gpuinfra-diff -->"
"""First line of the pull-request comment; the workflow finds and updates its own comment by it."""
MARK = {"create": "+", "delete": "-", "update": "~", "replace": "-/+", "same": "="}
ICON = {"error": "❌", "mandatory": "❌", "warning": "⚠️", "advisory": "⚠️", "info": "ℹ️"}
MAX_VALUE = 60


def short(value: Any, absent: bool = False, limit: int = MAX_VALUE) -> str:
    """A property value on one line: JSON, cut to `limit` characters."""
    if absent:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _text(value: object) -> str | None:
    """A string property as text; base64 (launch template user data) decoded when it is text, with its gz+b64
    scripts unpacked (templating.unpacked), so the first differing line is a script's, not a packed blob's."""
    if not isinstance(value, str):
        return None
    if len(value) > MAX_VALUE and "\n" not in value:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return value
        return unpacked(decoded) if decoded.isprintable() or "\n" in decoded else value
    return value


def pair(c: PropertyChangeOut) -> tuple[str, str]:
    """Before and after of one change, short enough for a table cell. Long texts (user data, policies) show
    the first line that differs, with its line number."""
    before, after = _text(c.before), _text(c.after)
    if (
        c.absent_before
        or c.absent_after
        or before is None
        or after is None
        or (len(before) <= MAX_VALUE and len(after) <= MAX_VALUE)
    ):
        return short(c.before, c.absent_before), short(c.after, c.absent_after)
    old, new = before.splitlines() or [""], after.splitlines() or [""]
    line = next(
        (
            i
            for i in range(max(len(old), len(new)))
            if (old[i] if i < len(old) else None) != (new[i] if i < len(new) else None)
        ),
        0,
    )
    pick = lambda lines: lines[line].strip() if line < len(lines) else "(no line)"  # noqa: E731
    where = f"line {line + 1}: " if len(old) > 1 or len(new) > 1 else ""
    return where + short(pick(old)), where + short(pick(new))


ACTIONS = (("create", "to add"), ("update", "to change"), ("replace", "to replace"), ("delete", "to delete"))


def counts(report: DiffReport) -> str:
    """'2 to add, 1 to change, 1 to replace, 0 to delete' over every stack (as `pulumi preview` sums its
    steps); empty when nothing changes."""
    total = {a: sum(s.counts.get(a, 0) for s in report.stacks) for a, _ in ACTIONS}
    return ", ".join(f"{total[a]} {label}" for a, label in ACTIONS) if any(total.values()) else ""


def free(r: ResourceChangeOut) -> bool:
    """A row folded into a count: added or changed at exactly $0.00/month (unknown is not zero; a replacement
    or deletion is always shown)."""
    return r.action in ("create", "update", "same") and r.monthly.delta_usd is not None and r.monthly.delta_usd == 0


def fold(rows: list[ResourceChangeOut]) -> tuple[list[ResourceChangeOut], list[ResourceChangeOut]]:
    """(rows shown, rows folded)."""
    return [r for r in rows if not free(r)], [r for r in rows if free(r)]


def tally(rows: list[ResourceChangeOut]) -> str:
    """'40 to add, 2 to change' of folded rows."""
    labels = dict(ACTIONS) | {"same": "cost only"}
    found: dict[str, int] = {}
    for r in rows:
        found[labels[r.action]] = found.get(labels[r.action], 0) + 1
    return ", ".join(f"{n} {label}" for label, n in found.items())


def nothing(report: DiffReport) -> bool:
    """No stack changed, nothing unreadable, nothing destroyed: the comment says 'No changes'."""
    return not report.problems and not report.losses and all(s.status == "unchanged" for s in report.stacks)


def percent(delta: Decimal | None, before: Decimal | None) -> str:
    if delta is None or before is None:
        return "unknown"
    if before == 0:
        return "new" if delta else "0%"
    return f"{delta / before * 100:+.1f}%"


def effect_text(c: PropertyChangeOut) -> str:
    return {
        "replace": "replaces",
        "may-replace": "may replace (new value unknown)",
        "refresh": "rolls instances (instance refresh)",
        "unknown": "known after apply",
    }.get(c.effect, "update")


def icon(f: FindingChangeOut) -> str:
    if f.status == "not-judged":
        return "⏸️"
    return "✅" if f.status == "resolved" else ICON.get(f.level, "•")


def loss_text(loss: DataLossOut) -> str:
    """One stateful replacement or deletion: what it is, what it loses, whether protection stops it."""
    guard = (
        "protected: `pulumi up` stops at this step until the protection is lifted"
        if loss.protected
        else "NOT protected: `pulumi up` destroys it"
    )
    return f"{loss.action} {loss.name} ({loss.type.rsplit(':', 1)[-1]}, stack {loss.stack}) loses {loss.lost}; {guard}"


def verdict(report: DiffReport) -> list[str]:
    """What a reviewer must know before the money, worst first: an unreadable head, blocking findings, stored
    data destroyed. Empty when none."""
    out = []
    if report.problems:
        out.append(f"❌ head cannot be read ({', '.join(p.stack for p in report.problems)})")
    if report.blocking:
        out.append(f"❌ {len(report.blocking)} blocking")
    unread = {p.stack for p in report.problems}
    unjudged = [s.stack for s in report.not_judged if s.stack not in unread]  # an unreadable head is said above
    if unjudged:
        out.append(f"❌ not judged ({', '.join(unjudged)})")
    if report.losses:
        out.append(f"⚠️ destroys stored data ({len(report.losses)})")
    return out + [f"🔄 {d}" for d in report.disruption]


def headline(report: DiffReport) -> str:
    return "".join(f"{v}; " for v in verdict(report)) + (
        f"monthly cost {signed_money(report.monthly.delta_usd)} "
        f"({percent(report.monthly.delta_usd, report.monthly.before.monthly_usd)}): "
        f"{money(report.monthly.before.monthly_usd)} -> {money(report.monthly.after.monthly_usd)}"
    )


__all__ = [
    "ACTIONS",
    "ICON",
    "MARK",
    "MARKER",
    "MAX_VALUE",
    "counts",
    "effect_text",
    "fold",
    "free",
    "headline",
    "icon",
    "loss_text",
    "nothing",
    "pair",
    "percent",
    "short",
    "tally",
    "verdict",
]
