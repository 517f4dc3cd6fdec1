"""Pieces of text the diff renderers share (terminal and Markdown): markers, a change's before and after cut
to a table cell, effects and icons, the headline. They only format: every number comes from the report."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from gpuinfra.report.format import CELL_WIDTH, money, readable, signed_money
from gpuinfra.report.model import DataLossOut, DiffReport, FindingChangeOut, PropertyChangeOut, ResourceChangeOut

MARKER = "<!-- gpuinfra-diff -->"
"""First line of the pull-request comment; the workflow finds and updates its own comment by it."""
MARK = {"create": "+", "delete": "-", "update": "~", "replace": "-/+", "same": "="}
ICON = {"error": "❌", "mandatory": "❌", "warning": "⚠️", "advisory": "⚠️", "info": "ℹ️"}
MAX_VALUE = CELL_WIDTH


def short(value: Any, absent: bool = False, limit: int = MAX_VALUE) -> str:
    """A property value on one line: JSON, cut to `limit` characters."""
    if absent:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ABSENT = object()


def _document(text: str) -> Any:
    """A JSON document (a policy, a container definition) parsed, or None for any other text."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def first_difference(before: Any, after: Any, path: str = "") -> tuple[str, Any, Any]:
    """The first leaf where two JSON documents differ: ('Statement[1].Resource[0]', old, new); _ABSENT for a side
    without it."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            if before.get(key, _ABSENT) != after.get(key, _ABSENT):
                return first_difference(before.get(key, _ABSENT), after.get(key, _ABSENT), f"{path}.{key}".lstrip("."))
    if isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            old = before[i] if i < len(before) else _ABSENT
            new = after[i] if i < len(after) else _ABSENT
            if old != new:
                return first_difference(old, new, f"{path}[{i}]")
    return path, before, after


def _comment(lines: list[str], i: int) -> bool:
    """Line `i` is a shell or YAML comment (an absent line is not)."""
    return i < len(lines) and lines[i].lstrip().startswith("#")


def pair(c: PropertyChangeOut) -> tuple[str, str]:
    """Before and after of one change, short enough for a table cell. JSON documents (policies) show the first
    leaf that differs, with its path; other long texts (user data) the first line that differs, with its number,
    preferring one that is not a comment on both sides."""
    before, after = readable(c.before), readable(c.after)
    if (
        c.absent_before
        or c.absent_after
        or before is None
        or after is None
        or (len(before) <= MAX_VALUE and len(after) <= MAX_VALUE)
    ):
        return short(c.before, c.absent_before), short(c.after, c.absent_after)
    documents = _document(before), _document(after)
    if documents[0] is not None and documents[1] is not None:
        path, old, new = first_difference(*documents)
        where = f"{path}: " if path else ""
        return where + short(old, old is _ABSENT), where + short(new, new is _ABSENT)
    old, new = before.splitlines() or [""], after.splitlines() or [""]
    differ = [
        i
        for i in range(max(len(old), len(new)))
        if (old[i] if i < len(old) else None) != (new[i] if i < len(new) else None)
    ]
    # The first line that does something: a changed comment above the changed command says less than the command.
    line = next((i for i in differ if not (_comment(old, i) and _comment(new, i))), differ[0] if differ else 0)
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
