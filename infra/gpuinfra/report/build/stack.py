"""Build the report model from a stack's inputs, plan and findings: the one place that knows both the
domain and the report's shape. Renderers never see a plan object."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.clouds import cloud_of
from gpuinfra.errors import format_path
from gpuinfra.findings import Finding, ordered
from gpuinfra.graph import Graph
from gpuinfra.load import Inputs
from gpuinfra.plan import DataprepPlan, FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.report.build.dataprep import dataprep_summary
from gpuinfra.report.build.economics import economics_sections, serving_sections
from gpuinfra.report.build.engine import engine_note, engine_out, plan_engine
from gpuinfra.report.build.failover import failover_section
from gpuinfra.report.build.finetune import finetune_summary
from gpuinfra.report.build.picture import picture
from gpuinfra.report.build.resources import by_component, key_settings
from gpuinfra.report.build.rollout import rollout_section
from gpuinfra.report.format import check, gigabytes, money, number, percent
from gpuinfra.report.model import (
    FindingOut,
    PolicyOut,
    PolicyReportOut,
    PolicyViolationOut,
    PreflightOut,
    Section,
    StackReport,
)

if TYPE_CHECKING:
    from gpuinfra.policy.pack import PolicyRun


def findings_out(inputs: Inputs, findings: Iterable[Finding]) -> list[FindingOut]:
    stack = inputs.stack
    out = []
    for f in findings:
        path = f.path if isinstance(f.path, tuple) else ()  # a validator's finding names a field of the spec
        full = (*stack.spec_prefix, *path)
        out.append(
            FindingOut(
                rule=f.rule,
                level=str(f.level),  # type: ignore[arg-type]
                path=format_path(path),
                message=f.message,
                hint=f.hint,
                file=str(stack.path),
                line=stack.doc.line_of(full),
            )
        )
    return out


def stack_report(
    inputs: Inputs,
    plan: TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan | DataprepPlan,
    findings: list[Finding],
    catalog: Catalog,
) -> StackReport:
    return StackReport(
        stack=inputs.stack.name,
        file=str(inputs.stack.path),
        workload=inputs.workload,
        account=inputs.spec.account,
        account_id=inputs.account.id,
        findings=findings_out(inputs, findings),
        plan=plan,
        summary=summary(plan, catalog, cloud_of(inputs.spec).quota_unit),
        engine=engine_out(plan_engine(plan, catalog)) if isinstance(plan, InferencePlan) else None,
    )


def summary(
    plan: TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan | DataprepPlan,
    catalog: Catalog,
    unit: str = "vCPUs",
) -> list[Section]:
    """`unit`: what the cloud's quotas count (the registry's quota_unit: EC2 vCPUs, Compute Engine GPUs);
    `catalog`: the facts a section names beside the plan's figures (the serving engine's row)."""
    if isinstance(plan, TrainingPlan):
        return training_summary(plan, unit)
    if isinstance(plan, InferencePlan):
        return inference_summary(plan, plan_engine(plan, catalog), unit)
    if isinstance(plan, FinetunePlan):
        return finetune_summary(plan)
    if isinstance(plan, DataprepPlan):
        return dataprep_summary(plan)
    return registry_summary(plan)


def training_summary(plan: TrainingPlan, unit: str = "vCPUs") -> list[Section]:
    mem = plan.memory
    sections = [
        Section(
            title="Cluster",
            rows=[
                ["nodes", f"{plan.nodes} x {plan.instance_type} ({plan.gpus} GPUs)"],
                ["capacity", f"{plan.on_demand_nodes} on-demand, {plan.spot_nodes} spot"],
                ["EFA interfaces per node", str(plan.efa_interfaces_per_node)],
                [
                    "Lustre",
                    f"{plan.lustre_capacity_gib:,} GiB, {number(plan.lustre_throughput_mb_s or 0, 0)} MB/s"
                    if plan.lustre_capacity_gib
                    else (
                        f"{number(plan.lustre_throughput_mb_s or 0, 0)} MB/s (site)"
                        if plan.lustre_throughput_mb_s
                        else "none"
                    ),
                ],
            ],
        ),
        Section(
            title="Memory fit",
            rows=[
                ["training state", f"{gigabytes(mem.total_bytes)} ({mem.bytes_per_parameter} B/parameter)"],
                ["per GPU (sharded over all)", gigabytes(mem.per_gpu_bytes)],
                ["usable per GPU", f"{gigabytes(mem.usable_bytes_per_gpu)} of {gigabytes(mem.gpu_bytes)}"],
                ["fits", check(mem.fits)],
            ],
        ),
    ]
    if plan.racks is not None:
        layout = plan.racks
        names: dict[int, list[str]] = {}
        for placement in plan.node_placements:
            names.setdefault(placement.rack, []).append(placement.node)
        sections.append(
            Section(
                title="Racks",
                columns=["rack", "nodes", "kW"] + (["node names"] if names else []),
                rows=[
                    [str(r.index), str(r.nodes), number(r.it_kw)]
                    + ([f"{names[r.index][0]} .. {names[r.index][-1]}"] if names else [])
                    for r in layout.racks
                ],
                notes=[
                    f"{layout.node_kw:g} kW per node, {layout.nodes_per_rack} per rack "
                    f"under {layout.power_budget_kw:g} kW",
                    f"cooling {layout.cooling}: up to {layout.cooling_limit_kw:g} kW per rack "
                    f"({'ok' if layout.within_cooling else 'EXCEEDED'})",
                    f"IT {number(layout.it_kw)} kW, facility {number(layout.facility_kw)} kW at PUE {layout.pue:g}",
                ],
            )
        )
    elif plan.racks_note:
        sections.append(Section(title="Racks", notes=[plan.racks_note]))
    ck = plan.checkpoint
    if ck is not None:
        sections.append(
            Section(
                title="Checkpointing",
                rows=[
                    ["interval", f"{number(ck.interval_minutes)} min"],
                    [
                        "optimum (Young / Daly)",
                        f"{number(ck.young_interval_minutes, 0)} / {number(ck.daly_interval_minutes, 0)} min",
                    ],
                    ["bound with spot", f"{number(ck.max_interval_minutes, 0)} min"],
                    [
                        "write time C",
                        f"{number(ck.write_seconds, 0)} s "
                        f"({number(ck.size_gb, 0)} GB at {number(ck.write_bandwidth_gb_s)} GB/s)",
                    ],
                    ["cluster MTBI M", f"{number(ck.mtbi_hours)} h"],
                    [
                        "expected waste",
                        f"{percent(ck.expected_waste_fraction)} (optimum {percent(ck.optimal_waste_fraction)})",
                    ],
                ],
            )
        )
    elif plan.checkpoint_note:
        sections.append(Section(title="Checkpointing", notes=[plan.checkpoint_note]))
    sections.extend(economics_sections(plan))
    sections.append(quota_section(plan.quotas, unit))
    return sections


def inference_summary(plan: InferencePlan, engine: Engine, unit: str = "vCPUs") -> list[Section]:
    mem = plan.memory
    choice = plan.choice
    return [
        Section(
            title="Model memory per replica",
            rows=[
                ["weights", gigabytes(mem.weights_bytes)],
                ["KV cache per token", f"{mem.kv_bytes_per_token:,} B"],
                ["KV cache of one context-length sequence", gigabytes(mem.kv_cache_bytes)],
                ["needed", gigabytes(mem.needed_bytes)],
            ],
            notes=[
                f"{engine.label} starts when weights + one "
                "maximum-length sequence fit (plan/roofline.py serving_admits)",
                engine_note(engine),
            ],
        ),
        Section(
            title=f"Instance: {choice.chosen or 'none fits'} ({choice.requested})",
            columns=["candidate", "accelerators", "usable", "fits", "$/h summed over regions"],
            rows=[
                [
                    c.instance_type,
                    f"{c.accelerator_count} x {c.accelerator}",
                    gigabytes(c.usable_bytes),
                    check(c.fits),
                    money(c.usd_per_hour_total, 4),
                ]
                for c in choice.candidates[:8]
            ],
            notes=[choice.reason],
        ),
        Section(
            title="Regions",
            columns=[
                "region",
                "instance",
                "zones",
                "min",
                "max",
                "peak needs",
                "on-demand base",
                "max spot",
                "warm pool",
                "cold start",
            ],
            rows=[
                [
                    r.region,
                    r.instance_type or "-",
                    ",".join(z[-1] for z in r.zones),
                    str(r.min_replicas),
                    f"{r.max_replicas} (spec {r.requested_max_replicas})"
                    if r.requested_max_replicas
                    else str(r.max_replicas),
                    str(r.demand_replicas),
                    str(r.on_demand_base),
                    str(r.max_spot),
                    str(r.warm_pool),
                    f"{number(r.cold_start_seconds, 0)} s",
                ]
                for r in plan.regions
            ],
            notes=failover_notes(plan),
        ),
        *([failover] if (failover := failover_section(plan)) else []),
        *([rollout] if (rollout := rollout_section(plan)) else []),
        *(serving_sections(plan.economics, engine) if plan.economics else []),
        quota_section(plan.quotas, unit),
    ]


def failover_notes(plan: InferencePlan) -> list[str]:
    """What failover n_plus_one sized, per region (nothing without it)."""
    return [
        f"{r.region}: failover needs {r.failover_replicas} replicas (its peak plus the largest other region's); "
        + (f"max raised from {r.requested_max_replicas}" if r.requested_max_replicas else "max already covers it")
        for r in plan.regions
        if r.failover_replicas is not None
    ]


def registry_summary(plan: RegistryPlan) -> list[Section]:
    return [
        Section(
            title="Buckets",
            columns=["region", "bucket", "role"],
            rows=[[plan.region, plan.bucket, "primary"]] + [[r.region, r.bucket, "replica"] for r in plan.replicas],
        ),
        Section(
            title="Cross-account grants",
            columns=["account", "id", "access", "prefix"],
            rows=[[g.account, g.account_id, "write", g.prefix] for g in plan.writers]
            + [[g.account, g.account_id, "read", g.prefix] for g in plan.readers],
        ),
    ]


def quota_section(quotas: list, unit: str = "vCPUs") -> Section:  # type: ignore[type-arg]
    return Section(
        title=f"Quota needs ({unit} at full size)",
        # "account need" adds the account's other stacks (plan/account.py): the figure held against the grant.
        columns=["account", "region", "code", "quota", "need", "account need", "granted"],
        rows=[
            [
                q.account,
                q.region,
                q.code or "-",
                q.name,
                str(q.own),
                str(q.vcpus),
                "-" if q.granted is None else str(q.granted),
            ]
            for q in quotas
        ],
    )


def graph_report(stack: StackReport, graph: Graph) -> StackReport:
    """The stack report with the resource graph and the sections read from it."""
    return stack.model_copy(
        update={
            "resources": list(graph.resources),
            "summary": [*stack.summary, *key_settings(graph), by_component(graph)],
            "picture": picture(graph),
        }
    )


def policy_report(stack: StackReport, run: PolicyRun, graph: Graph) -> StackReport:
    """The stack report with the policy pack's verdicts: mandatory first, then by policy and resource."""
    violations = [
        PolicyViolationOut(
            policy=v.rule,
            level=v.level.enforcement,
            resource=v.urn or None,
            resource_name=v.name or None,
            message=v.message,
            description=v.description,
        )
        for v in ordered(run.violations)
    ]
    counts: dict[str, int] = {}
    for v in violations:
        counts[v.policy] = counts.get(v.policy, 0) + 1
    reasons: dict[str, str] = {}
    for na in sorted(run.not_applicable):
        reasons.setdefault(na.policy, na.reason)
    for name in set(run.levels) - run.evaluated:
        reasons.setdefault(name, "no resource of the types it judges")
    policies = []
    for name, level in sorted(run.levels.items()):
        status = (
            "disabled"
            if level == "disabled"
            else "failed"
            if counts.get(name)
            else "not-applicable"
            if name in reasons
            else "passed"
        )
        policies.append(
            PolicyOut(
                name=name,
                kind=run.kinds[name],
                level=level,
                status=status,  # type: ignore[arg-type]
                violations=counts.get(name, 0),
                reason=reasons.get(name) if status == "not-applicable" else None,
            )
        )
    return stack.model_copy(update={"policy": PolicyReportOut(pack=run.pack, policies=policies, violations=violations)})


def preflight_report(stack: StackReport, found: Iterable[Finding]) -> StackReport:
    """The stack report with the preflight findings on its graph (errors first, as preflight sorts them)."""
    return stack.model_copy(update={"preflight": [preflight_out(f) for f in found]})


def preflight_out(f: Finding) -> PreflightOut:
    return PreflightOut(
        rule=f.rule,
        level=str(f.level),  # type: ignore[arg-type]
        urn=f.urn,
        name=f.name,
        type=f.type,
        path=str(f.path),
        value=f.value,
        message=f.message,
        source=f.source,
    )


__all__ = ["findings_out", "graph_report", "policy_report", "preflight_report", "stack_report", "summary"]
