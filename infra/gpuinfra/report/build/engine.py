"""The serving engine behind an inference report: which catalog row (engines.yaml) the fleet launched from, and how
old it is, for the summary's note and the JSON's `engine`, as the cost section states its prices' dates."""

from __future__ import annotations

from gpuinfra.catalog import Catalog, staleness
from gpuinfra.catalog.engines import Engine, age_days
from gpuinfra.plan import InferencePlan
from gpuinfra.report.model import EngineOut


def plan_engine(plan: InferencePlan, catalog: Catalog) -> Engine:
    """The catalog row of the engine the plan sized the fleet for (a plan read back without economics: vLLM, the
    spec's default)."""
    return catalog.engine(plan.economics.engine if plan.economics else "vllm")


def engine_out(engine: Engine) -> EngineOut:
    return EngineOut(name=engine.name, source=engine.source, as_of=engine.as_of)


def engine_note(engine: Engine) -> str:
    """Where the engine's image, launch and metrics come from and how old they are (engines.yaml): a missing date
    shows as undated, one older than the catalog's age limit as stale, as a price's does (catalog/staleness.py)."""
    where = f"{engine.label}'s image, launch and metrics: catalog engines.yaml ({engine.source})"
    age = age_days(engine, staleness.today())
    if age is None:
        return f"{where}, undated (its source gives no date)"
    limit = staleness.max_age_days()
    if age > limit:
        return f"{where}, as of {engine.as_of}: stale, {age} days old (limit {limit} days: {staleness.MAX_AGE_ENV})"
    return f"{where}, as of {engine.as_of}"


__all__ = ["engine_note", "engine_out", "plan_engine"]
