"""Renderers of the diff report: terminal text, Markdown (the pull-request comment, templates/diff.md.j2) and
JSON. Each is `render_diff_<format>(report) -> str` and only formats: the numbers come from the report."""

from __future__ import annotations

import base64
import binascii
import json
from decimal import Decimal
from typing import Any

from ..templating import render
from .costs import as_of_text
from .format import money, signed_money
from .model import DiffReport, FindingChangeOut, PropertyChangeOut, ResourceChangeOut, StackDiffOut

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
    """A string property as text; base64 (launch template user data) decoded when it is text."""
    if not isinstance(value, str):
        return None
    if len(value) > MAX_VALUE and "\n" not in value:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return value
        return decoded if decoded.isprintable() or "\n" in decoded else value
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


def percent(delta: Decimal, before: Decimal) -> str:
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
    return "✅" if f.status == "resolved" else ICON.get(f.level, "•")


def headline(report: DiffReport) -> str:
    return (
        f"monthly cost {signed_money(report.monthly_delta_usd)} "
        f"({percent(report.monthly_delta_usd, report.monthly_before_usd)}): "
        f"{money(report.monthly_before_usd)} -> {money(report.monthly_after_usd)}"
    )


def render_diff_json(report: DiffReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_diff_markdown(report: DiffReport) -> str:
    return render(
        "diff.md.j2",
        report=report,
        marker=MARKER,
        money=money,
        signed=signed_money,
        percent=percent,
        pair=pair,
        effect=effect_text,
        icon=icon,
        mark=MARK,
        as_of=as_of_text,
        unpriced=sum(len(s.unpriced_after) for s in report.stacks),
    )


def render_diff_table(report: DiffReport) -> str:
    out = [
        f"gpuinfra diff  base: {report.base}  head: {report.head}",
        headline(report),
        f"  head range {money(report.monthly_min_after_usd)} to {money(report.monthly_max_after_usd)}; "
        f"{as_of_text(report.prices_as_of, report.prices_as_of_newest)}",
    ]
    out += [f"  note: {n}" for n in report.notes]
    for problem in report.problems:
        out.append(f"{problem.stack}: cannot be read")
        out += [f"  {m}" for m in problem.messages]
    for s in report.stacks:
        out += _stack(s)
    return "\n".join(out) + "\n"


def _stack(s: StackDiffOut) -> list[str]:
    counts = ", ".join(f"{n} {a}" for a, n in sorted(s.counts.items()))
    out = [
        "",
        f"== {s.stack} ({s.status}) {signed_money(s.monthly_delta_usd)}/month: "
        f"{money(s.monthly_before_usd)} -> {money(s.monthly_after_usd)}" + (f"  [{counts}]" if counts else ""),
    ]
    for f in s.findings:
        if f.status != "unchanged" or f.level in ("error", "mandatory"):
            out.append(f"  {f.status:9} {f.level:9} {f.rule} {f.where}: {f.message}")
    for r in s.resources:
        out += _resource(r)
    out += [f"  unpriced: {u}" for u in s.unpriced_after[:10]]
    return out


def _resource(r: ResourceChangeOut) -> list[str]:
    cost = ""
    if r.monthly_delta_usd is not None and r.monthly_delta_usd != 0:
        cost = f"  {signed_money(r.monthly_delta_usd)}/month"
    elif r.monthly_delta_usd is None and r.action != "delete" and r.monthly_after_usd is None:
        cost = "  cost unknown"
    out = [f"{MARK[r.action]:>4} {r.type} {r.name} ({r.action}){cost}"]
    for c in r.changes:
        tail = "" if c.effect == "update" else f"  [{effect_text(c)}{': ' + c.reason if c.reason else ''}]"
        before, after = pair(c)
        out.append(f"       {c.path}: {before} -> {after}{tail}")
    return out


__all__ = ["MARKER", "headline", "pair", "render_diff_json", "render_diff_markdown", "render_diff_table", "short"]
