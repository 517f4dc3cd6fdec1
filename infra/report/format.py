"""Every number, size and money format in one place (Infracost keeps all formatting in format.go)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

UNKNOWN = "-"


def money(value: Decimal | str | None, places: int = 2) -> str:
    """$1,234.56; None prints '-' because unknown is not zero."""
    if value is None:
        return UNKNOWN
    amount = Decimal(value)
    q = Decimal(1).scaleb(-places)
    rounded = amount.quantize(q, rounding=ROUND_HALF_UP)
    sign = "-" if rounded < 0 else ""
    return f"{sign}${abs(rounded):,.{places}f}"


def signed_money(value: Decimal | str | None, places: int = 2) -> str:
    """+$1.00 / -$1.00 / $0.00, for deltas."""
    if value is None:
        return UNKNOWN
    amount = Decimal(value)
    text = money(amount, places)
    return f"+{text}" if amount > 0 else text


def gigabytes(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.1f} GB"


def number(value: float, places: int = 1) -> str:
    text = f"{value:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(fraction: float, places: int = 1) -> str:
    return f"{fraction * 100:.{places}f}%"


def check(ok: bool) -> str:
    return "yes" if ok else "NO"


__all__ = ["UNKNOWN", "check", "gigabytes", "money", "number", "percent", "signed_money"]
