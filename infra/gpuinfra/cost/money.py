"""How a dollar amount reads, wherever it is shown (reports, policy messages): exact Decimals, rounded half
up, and unknown printed as '-' because unknown is not zero (Infracost's format.go::formatCost)."""

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


__all__ = ["UNKNOWN", "money", "signed_money"]
