"""What an intent names that the catalog must know (regions, an accelerator, a training type, hosted-API
providers), checked before any planner runs: a name the catalog lacks is an input error at its field, with the
closest names."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.managed import ManagedPrices
from gpuinfra.plan.advise.specs import IntentProblem
from gpuinfra.spec.intent import IntentSpec
from gpuinfra.spec.problems import did_you_mean


def _region_problems(intent: IntentSpec, regions: frozenset[str]) -> Iterator[IntentProblem]:
    named: list[tuple[tuple[str | int, ...], str]] = []
    if intent.traffic is not None:
        named += [(("traffic", "regions", i), r) for i, r in enumerate(intent.traffic.regions)]
    if intent.adapt is not None and intent.adapt.region:
        named.append((("adapt", "region"), intent.adapt.region))
    if intent.train is not None:
        named.append((("train", "region"), intent.train.region))
    for at, region in named:
        if region not in regions:
            hint = did_you_mean(region, regions) or "`gpuinfra catalog --regions` lists them"
            yield IntentProblem(f"region {region} is not in the catalog", at, hint)


def _training_type_problem(intent: IntentSpec, catalog: Catalog) -> IntentProblem | None:
    if intent.train is None:
        return None
    name = intent.train.instance_type
    info = catalog.instance(name)
    trainable = [i.name for i in catalog.instance_types if i.accelerator_count and i.accelerator_kind in (None, "gpu")]
    if info is None:
        hint = did_you_mean(name, trainable) or "`gpuinfra catalog --accelerator H100` lists GPU types"
        return IntentProblem(f"instance type {name} is not in the catalog", ("train", "instance_type"), hint)
    if not info.accelerator_count or catalog.accelerator_peak(info.accelerator or "") is None:
        return IntentProblem(
            f"{name} has no accelerator with a published dense peak: no training run can be planned on it",
            ("train", "instance_type"),
            "name a GPU training type, e.g. p5.48xlarge",
        )
    return None


def _provider_problems(intent: IntentSpec, prices: ManagedPrices) -> Iterator[IntentProblem]:
    known = {p.provider for p in prices.prices}
    for i, name in enumerate(intent.constraints.managed_providers or []):
        if name not in known:
            hint = did_you_mean(name, known) or f"the catalog prices {', '.join(sorted(known))}"
            yield IntentProblem(f"provider {name} is not in the catalog", ("constraints", "managed_providers", i), hint)


def reference_problems(intent: IntentSpec, catalog: Catalog, prices: ManagedPrices) -> list[IntentProblem]:
    problems = [*_region_problems(intent, catalog.regions), *_provider_problems(intent, prices)]
    gpu = intent.traffic.gpu if intent.traffic else None
    if gpu is not None and gpu not in catalog.accelerator_names():
        hint = did_you_mean(gpu, catalog.accelerator_names()) or "`gpuinfra catalog` lists the accelerators"
        problems.append(IntentProblem(f"accelerator {gpu} is not in the catalog", ("traffic", "gpu"), hint))
    trained = _training_type_problem(intent, catalog)
    return [*problems, *([trained] if trained else [])]


__all__ = ["reference_problems"]
