"""How often spot nodes are taken back: the spec's rate, else the catalog's Spot Instance Advisor band for the
type and region, else a stated default. The checkpoint interval, the restart budget and the run's goodput read it."""

from __future__ import annotations

from gpuinfra.catalog import Catalog
from gpuinfra.spec import TrainingSpec

DEFAULT_MONTHLY = 0.05
"""The upper bound of the advisor's lowest band ("<5%"): the rate assumed when neither the spec nor the catalog
gives one for the type and region (what the spec's default was before the catalog carried the advisor's bands)."""


def spot_interruption(spec: TrainingSpec, catalog: Catalog, instance_type: str) -> tuple[float, str]:
    """(share of spot nodes interrupted per month, where the figure comes from). The advisor gives a band of the
    capacity reclaimed over the trailing month; its upper bound is taken, so the interval errs towards checkpointing
    more often, not less."""
    given = spec.failure.spot_interruption_rate_monthly
    if given is not None:
        return given, "failure.spot_interruption_rate_monthly"
    advice = catalog.interruption(instance_type, spec.region)
    if advice is not None:
        return advice.band_max_percent / 100, (
            f"Spot Instance Advisor: {advice.band} in {spec.region} as of {advice.as_of} (upper bound taken)"
        )
    return DEFAULT_MONTHLY, f"default {DEFAULT_MONTHLY:.0%}/month (no Spot Instance Advisor band for {instance_type})"


__all__ = ["DEFAULT_MONTHLY", "spot_interruption"]
