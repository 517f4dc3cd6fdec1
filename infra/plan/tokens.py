"""Serving economics that need no throughput model: what a million tokens cost at a measured (or, once the
roofline lands, derived) rate. The throughput physics live in plan/roofline.py, not here."""

from __future__ import annotations

from decimal import Decimal

SECONDS_PER_HOUR = 3600


def cost_per_million_tokens(tokens_per_second: float, hourly_usd: Decimal) -> Decimal | None:
    """USD per 1,000,000 tokens of a replica that costs `hourly_usd` and produces `tokens_per_second`:
    hourly / (tokens/s x 3600) x 1e6. None when the replica produces nothing (the cost is unbounded)."""
    if tokens_per_second <= 0:
        return None
    per_hour = Decimal(repr(tokens_per_second)) * SECONDS_PER_HOUR
    return hourly_usd / per_hour * 1_000_000


__all__ = ["cost_per_million_tokens"]
