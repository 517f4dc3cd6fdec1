"""Rung 1's figures: what comparable hosted models cost at the intent's traffic, and which of them the intent's
constraints allow. Prices are catalog data (catalog/data/managed_apis.yaml), each with its source."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog.managed import ManagedPrice, ManagedPrices
from gpuinfra.plan.advise.model import ApiOption, ManagedRung
from gpuinfra.plan.checkpoint import HOURS_PER_MONTH
from gpuinfra.spec.intent import Constraints, IntentSpec, Traffic

DAYS_PER_MONTH = Decimal(repr(HOURS_PER_MONTH)) / 24
"""730 hours / 24: the month the catalog's hourly prices are billed over (plan/checkpoint.py HOURS_PER_MONTH)."""
CENT = Decimal("0.01")


def daily_tokens(traffic: Traffic) -> tuple[float, float]:
    """(input, output) tokens a day."""
    requests = traffic.daily_requests
    return requests * traffic.input_tokens, requests * traffic.output_tokens


def blended_price(price: ManagedPrice, traffic: Traffic) -> Decimal:
    """USD per million tokens of the traffic's input/output mix."""
    total = traffic.input_tokens + traffic.output_tokens
    return price.cost_usd(traffic.input_tokens * 1e6 / total, traffic.output_tokens * 1e6 / total)


def why_not(price: ManagedPrice, constraints: Constraints) -> str | None:
    """The constraint that rules the provider out, if one does."""
    if not constraints.managed_api:
        return "constraints.managed_api is false: no hosted API"
    allowed = constraints.managed_providers
    if allowed is not None and price.provider not in allowed:
        return f"not among constraints.managed_providers ({', '.join(allowed)})"
    residency = constraints.data_residency
    if residency:
        if price.regions is None:
            return "the source does not say where it serves from: residency in " + ", ".join(residency) + " unknown"
        missing = [r for r in residency if r not in price.regions]
        if missing:
            return f"does not serve from {', '.join(missing)} (constraints.data_residency)"
    return None


def managed_rung(intent: IntentSpec, prices: ManagedPrices) -> ManagedRung | None:
    """Every comparable hosted model at the traffic, cheapest first; None without traffic."""
    traffic = intent.traffic
    if traffic is None:
        return None
    daily_in, daily_out = daily_tokens(traffic)
    options = []
    for price in prices.comparable(intent.model.parameters_billion):
        source = prices.sources[price.source]
        reason = why_not(price, intent.constraints)
        options.append(
            ApiOption(
                provider=price.provider,
                model=price.model,
                input_usd_per_mtok=price.input_usd_per_mtok,
                output_usd_per_mtok=price.output_usd_per_mtok,
                monthly_usd=(price.cost_usd(daily_in, daily_out) * DAYS_PER_MONTH).quantize(CENT),
                blended_usd_per_mtok=blended_price(price, traffic),
                eligible=reason is None,
                why_not=reason,
                source=price.source,
                source_url=source.url,
                as_of=price.as_of,
                read_on=source.read_on,
            )
        )
    options.sort(key=lambda o: (o.monthly_usd, o.provider))
    cheapest = next((o for o in options if o.eligible), None)
    return ManagedRung(options=options, cheapest=cheapest)


__all__ = ["DAYS_PER_MONTH", "blended_price", "daily_tokens", "managed_rung", "why_not"]
