"""Every number, size and money format in one place (Infracost keeps all formatting in format.go)."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.cost.money import UNKNOWN, money, signed_money


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


def check(ok: bool) -> str:
    return "yes" if ok else "NO"


__all__ = ["UNKNOWN", "check", "figure", "gigabytes", "money", "number", "percent", "signed_money"]
