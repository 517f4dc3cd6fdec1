"""Every number, size and money format in one place (Infracost keeps all formatting in format.go)."""

from __future__ import annotations

import base64
import binascii
import html
import re
from decimal import Decimal

from gpuinfra.cost.money import UNKNOWN, money, signed_money
from gpuinfra.templating import unpacked


def gigabytes(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.1f} GB"


def number(value: float, places: int = 1) -> str:
    text = f"{value:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(fraction: float, places: int = 1) -> str:
    return f"{fraction * 100:.{places}f}%"


def figure(unit: str, value: Decimal | None) -> str:
    """A plan figure in its unit: $1,234 for usd, else the number with its unit; '-' when unknown."""
    if value is None:
        return UNKNOWN
    if unit == "usd":
        return money(value, 0)
    if unit.startswith("usd "):  # a unit price, e.g. "usd per 1M tokens": cents matter
        return f"{money(value, 3)} {unit[4:]}"
    return f"{number(float(value), 1)} {unit}"


_MARKDOWN = re.compile(r"([\\`*_\[\]|~!])|^([-+])(?=\s)")
"""Characters GitHub Flavored Markdown gives a meaning inline: escapes, code, emphasis, links and images,
table cells, headings, strikethrough (GFM spec 0.29, "Backslash escapes": any ASCII punctuation may be escaped)."""
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")


def markdown_text(value: object, *, code: bool = False, breaks: bool = False) -> str:
    """Free text (spec values, messages, names) made inert for the pull-request comment: the one escaping
    function every Markdown template uses. Raw HTML is escaped (no <details>, <img> or <a> from a spec), Markdown
    punctuation is backslash-escaped (it renders as itself), and an @mention gets a zero-width space after the
    @ so GitHub notifies nobody. `code` renders an inline code span instead (backticks cannot close it, pipes
    cannot split a table cell); `breaks` keeps line breaks as <br> (else a space)."""
    text = "" if value is None else str(value)
    newline = "<br>" if breaks and not code else " "
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if code:
        return "`" + text.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"
    text = html.escape(text, quote=False)
    text = _MARKDOWN.sub(lambda m: "\\" + (m.group(1) or m.group(2)), text)  # - and + mark a list item only first
    text = text.replace("#", "\\#\u200b")  # a heading mark, and #123 would link an issue (as Dependabot breaks it)
    text = _MENTION.sub("@\u200b", text)
    return text.replace("\n", newline)


def check(ok: bool) -> str:
    return "yes" if ok else "NO"


CELL_WIDTH = 60
"""The longest property value a diff table cell shows whole; shorter strings are never base64 blobs worth decoding."""


def readable(value: object) -> str | None:
    """A string property as people read it; base64 (launch template user data) decoded when it is text, with its
    gz+b64 scripts unpacked (templating.unpacked), so a diff's first differing line is a script's, not a packed
    blob's. None for a value that is not a string."""
    if not isinstance(value, str):
        return None
    if len(value) > CELL_WIDTH and "\n" not in value:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return value
        return unpacked(decoded) if decoded.isprintable() or "\n" in decoded else value
    return value


__all__ = [
    "CELL_WIDTH",
    "UNKNOWN",
    "check",
    "figure",
    "gigabytes",
    "markdown_text",
    "money",
    "number",
    "percent",
    "readable",
    "signed_money",
]
