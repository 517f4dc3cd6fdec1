"""`gpuinfra advise INTENT`: read the intent file, walk the ladder over the catalog and the hosted-API prices,
and hand back the advice; with `--init`, write the stacks the answer needs through `init`'s machinery (the
project, the organization file, the editor schemas), training and serving in their separate accounts.

A new project's organization file is `init`'s skeleton with the grants the answer needs: each quota code at the
vCPUs the stacks need at full size, each account's budget at its stacks' on-demand compute at full size plus
half again for what rides along (load balancers, storage, logs), the registry replicated to every serving region.
An existing organization file is never touched: the grants it lacks are listed instead."""

from __future__ import annotations

import io
import math
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.catalog.managed import load_managed_prices
from gpuinfra.commands.init import (
    InitResult,
    check_replaceable,
    new_project,
    render,
    schema_path,
    write,
    write_new,
    write_schemas,
)
from gpuinfra.errors import InputError
from gpuinfra.load import ORG_FILE_NAME, project_dir, stacks_dir
from gpuinfra.plan.advise import IntentProblem, IntentProblems, StackSpec, Walked, advise
from gpuinfra.plan.advise.specs import advice_org
from gpuinfra.plan.checkpoint import HOURS_PER_MONTH
from gpuinfra.plan.dataprep import DataprepPlan, plan_dataprep
from gpuinfra.plan.finetune import FinetunePlan, plan_finetune
from gpuinfra.plan.inference import InferencePlan, plan_inference
from gpuinfra.plan.training import TrainingPlan, plan_training
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, TrainingSpec, read_yaml
from gpuinfra.spec.intent import INTENT_KEY, read_intent

BUDGET_HEADROOM = Decimal("1.5")
"""Compute is most of a GPU stack's bill; the other half of the estimate covers what rides along."""
BUDGET_STEP = 1000
StackPlan = InferencePlan | TrainingPlan | FinetunePlan | DataprepPlan
WORKLOADS = {InferenceSpec: "inference", TrainingSpec: "training", FinetuneSpec: "finetune", DataprepSpec: "dataprep"}
WHAT = {
    "inference": "the serving fleet",
    "training": "the training cluster",
    "finetune": "the fine-tuning queue (AWS Batch, one node a run)",
    "dataprep": "the corpus's preparation (datatrove on spot CPU workers)",
}


def advise_command(path: Path) -> Walked:
    """The advice for the intent at `path`; an unreadable or ill-typed file raises InputError (exit 2), and so
    does an intent that asks for more than a stack can hold (named at the intent's part that asks it)."""
    document = read_intent(path)
    try:
        return advise(document.spec, load_catalog(), load_managed_prices())
    except (IntentProblem, IntentProblems) as exc:
        found = exc.problems if isinstance(exc, IntentProblems) else [exc]
        raise InputError([document.doc.problem(str(p), (INTENT_KEY, *p.at), p.hint) for p in found]) from None


@dataclass
class Grants:
    """What the answer's stacks need the organization to grant: vCPUs per (account, region, quota code) and a
    monthly budget per account."""

    quotas: dict[tuple[str, str, str], int] = field(default_factory=lambda: defaultdict(int))
    budgets: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    regions: set[str] = field(default_factory=set)


def init_advice(walked: Walked, intent: Path, directory: Path, force: bool = False) -> tuple[InitResult, list[str]]:
    """Write the answer's stacks into the Pulumi project at or above `directory` (a new one there when none);
    returns what was written and the grants an existing organization file still lacks."""
    result = InitResult(stack=Path())
    if not walked.specs:
        result.next_steps = ["nothing to build: the answer is a managed API"]
        return result, []
    project = project_dir(directory) or new_project(directory, result)
    stacks = stacks_dir(project)
    catalog = load_catalog()
    grants = needed_grants(walked, catalog)
    org_path = stacks / ORG_FILE_NAME
    lacking: list[str] = []
    if org_path.exists():
        lacking = missing_grants(read_yaml(org_path, "organization file").data, grants)
    else:
        write_new(org_path, org_text(schema_path(project, org_path, "org"), grants), result, project)
    write_schemas(project, result)
    for spec in walked.specs.values():
        path = stacks / f"Pulumi.{spec.name}.yaml"
        check_replaceable(path, project, force)
        write(path, stack_text(spec, schema_path(project, path, "stack"), intent, walked), result, project)
        result.next_steps.append(f"gpuinfra preview {spec.name}")
        result.stack = path
    return result, lacking


def planned(spec: StackSpec, catalog: Catalog) -> StackPlan:
    org = advice_org()
    if isinstance(spec, InferenceSpec):
        return plan_inference(spec, org, catalog)
    if isinstance(spec, TrainingSpec):
        return plan_training(spec, org, catalog)
    if isinstance(spec, DataprepSpec):
        return plan_dataprep(spec, org, catalog)
    return plan_finetune(spec, org, catalog)


def needed_grants(walked: Walked, catalog: Catalog) -> Grants:
    grants = Grants()
    for spec in walked.specs.values():
        plan = planned(spec, catalog)
        for need in plan.quotas:
            if need.code is not None and need.vcpus:
                grants.quotas[(need.account, need.region, need.code)] += need.vcpus
        grants.budgets[spec.account] += full_size_monthly(plan, catalog, spec)
        if isinstance(plan, InferencePlan):
            grants.regions |= {r.region for r in plan.regions}
    return grants


def full_size_monthly(plan: StackPlan, catalog: Catalog, spec: StackSpec) -> Decimal:
    """On-demand compute of the stack at its maximum, a month (unknown prices count nothing: the budget is then
    short, and the policy pack says so at preview); a dataprep stack's maximum is its worker group's max_nodes."""
    hours = Decimal(repr(HOURS_PER_MONTH))
    if isinstance(spec, DataprepSpec):
        price = catalog.on_demand(spec.workers.instance_type, spec.region)
        return price.usd_per_hour * spec.workers.max_nodes * hours if price else Decimal(0)
    if isinstance(plan, InferencePlan):
        total = Decimal(0)
        for region in plan.regions:
            price = catalog.on_demand(region.instance_type or "", region.region)
            total += price.usd_per_hour * region.max_replicas * hours if price else Decimal(0)
        return total
    if isinstance(plan, TrainingPlan):
        rate = plan.run.at_spec.hourly_usd if plan.run else None
        return (rate or Decimal(0)) * hours
    assert isinstance(plan, FinetunePlan), "a dataprep plan is priced from its spec above"
    rate = plan.chosen.hourly_usd if plan.chosen else None
    return (rate or Decimal(0)) * hours


def budget(amount: Decimal) -> int:
    return int(math.ceil(amount * BUDGET_HEADROOM / BUDGET_STEP) * BUDGET_STEP)


def org_text(schema: str, grants: Grants) -> str:
    """`init`'s organization skeleton with the answer's grants in place of its examples."""
    yaml = YAML()
    yaml.preserve_quotes = True
    data = yaml.load(render("org.yaml.j2", schema_path=schema))
    for name, account in data["accounts"].items():
        if name in grants.budgets:
            account["monthly_budget_usd"] = budget(grants.budgets[name])
        own = {(r, c): v for (a, r, c), v in grants.quotas.items() if a == name}
        if own:
            account["quotas"] = {}
            for (region, code), vcpus in sorted(own.items()):
                account["quotas"].setdefault(region, {})[code] = vcpus
    registry = data["registry"]
    registry["replica_regions"] = sorted({*registry["replica_regions"], *grants.regions})
    out = io.StringIO()
    yaml.dump(data, out)
    header = "# Sized by `gpuinfra advise --init`: quotas at what the stacks need at full size, budgets at their\n"
    header += "# on-demand compute at full size x 1.5 (docs/advise.md). Ask AWS for the quotas before `pulumi up`.\n"
    text = out.getvalue()
    first, rest = text.split("\n", 1)
    return f"{first}\n{header}{rest}"


def missing_grants(org: Any, grants: Grants) -> list[str]:
    """Grants the existing organization file lacks, one line each."""
    accounts = org.get("accounts", {}) if isinstance(org, dict) else {}
    lines = []
    for (account, region, code), vcpus in sorted(grants.quotas.items()):
        quotas = (accounts.get(account) or {}).get("quotas") or {}
        granted = (quotas.get(region) or {}).get(code, 0)
        if granted < vcpus:
            lines.append(f"accounts.{account}.quotas.{region}.{code}: {vcpus} vCPUs needed, {granted} granted")
    for account, amount in sorted(grants.budgets.items()):
        have = (accounts.get(account) or {}).get("monthly_budget_usd", 0)
        if have < budget(amount):
            lines.append(f"accounts.{account}.monthly_budget_usd: about {budget(amount)} needed, {have} granted")
    return lines


def stack_text(spec: StackSpec, schema: str, intent: Path, walked: Walked) -> str:
    workload = WORKLOADS[type(spec)]
    yaml = YAML()
    yaml.default_flow_style = False
    out = io.StringIO()
    yaml.dump({"config": {f"gpuinfra:{workload}": spec.model_dump(mode="json", exclude_unset=True)}}, out)
    rung = walked.advice.stopped_at
    return (
        f"# yaml-language-server: $schema={schema}\n"
        f"# {WHAT[workload]} of `gpuinfra advise {intent.name}` (rung {rung}), written by `gpuinfra init`.\n"
        "# The placeholders (AMI, certificate, hosted zone, buckets, trainer image) are yours to replace before\n"
        "# `pulumi up`; the sizes are the advice's (docs/advise.md).\n" + out.getvalue()
    )


__all__ = ["advise_command", "init_advice"]
