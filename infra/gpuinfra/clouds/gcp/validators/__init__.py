"""Google's validator rules, registered when the cloud registry loads this module for a Google stack
(validators/runner.py asks it): the project, the zones that offer the machine type, quotas in GPUs, the MIG
updater's limits and the autoscaler's, and the throughput claim against the same roofline AWS's fleet is held to."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.clouds.gcp.catalog import gcp_book
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpProject
from gpuinfra.clouds.gcp.spec.fleet import MAX_AUTOHEAL_DELAY
from gpuinfra.clouds.gcp.validators.project import project_failures
from gpuinfra.clouds.gcp.validators.quotas import quota_failures
from gpuinfra.plan import InferencePlan
from gpuinfra.spec import Organization
from gpuinfra.validators.base import Failure, Level, floor_2, rule

GB = 1e9


@rule(Level.WARNING)
def gcp_weights_wait_past_autoheal(spec: GcpInferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A new VM waits up to weights.replication_wait_minutes for its region's copy of the release; autohealing
    counts it failed after its initial delay, which cannot pass 3600 s (compute v1): past that, a VM still waiting
    for its weights is recreated, and starts its wait again."""
    wait = spec.weights.replication_wait_minutes * 60
    for rp in plan.regions:
        if rp.cold_start_seconds + wait > MAX_AUTOHEAL_DELAY:
            yield Failure(
                f"{rp.region}: cold start {rp.cold_start_seconds:.0f} s plus the {wait} s wait for the weights is past "
                f"autohealing's longest initial delay ({MAX_AUTOHEAL_DELAY} s): a VM still waiting is recreated",
                ("weights", "replication_wait_minutes"),
                f"write `replication_wait_minutes: {max(0, int(MAX_AUTOHEAL_DELAY - rp.cold_start_seconds) // 60)}` "
                "under weights (the most that fits autohealing's delay)",
            )
            return


@rule(Level.ERROR)
def gcp_project_purpose(spec: GcpInferenceSpec, org: Organization) -> Iterator[Failure]:
    """A Google fleet deploys into a Google project (cloud: gcp) of purpose inference, never a training one."""
    yield from project_failures(
        spec.account,
        org,
        "inference",
        "name an organization entry with `cloud: gcp` in `account` (docs/gcp.md), or remove `cloud: gcp` to serve "
        "on AWS",
        "an inference fleet never shares a project with training",
        "name a project of `purpose: inference` in `account`",
    )


@rule(Level.ERROR)
def gcp_machine_type_not_in_zone(spec: GcpInferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """Every zone of a regional MIG must offer its machine type: Compute Engine refuses the instance in one that
    does not (the catalog's zones per region, clouds/gcp/catalog/data/g2.yaml)."""
    book = gcp_book()
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        machine, offered = rp.instance_type, book.zones_of(region.region)
        if not offered:
            yield Failure(
                f"{region.region} offers G2 in no zone the catalog lists (it lists {', '.join(sorted(book.zones))})",
                ("regions", i, "region"),
                f"write a region that offers G2 in regions[{i}], e.g. `region: {sorted(book.zones)[0]}`"
                if book.zones
                else "serve from a region that offers G2",
            )
            continue
        if machine is None:
            continue  # no machine type holds the model: gcp-no-machine-type says why
        if book.machine(machine) is None:
            yield Failure(
                f"{region.region}: machine type {machine!r} is not a G2 type the catalog knows",
                ("regions", i, "machine_type") if region.machine_type else ("instance", "type"),
                f"write `machine_type: {min(book.machine_types)}` in regions[{i}] "
                f"(G2: {', '.join(book.machine_types)})",
            )
            continue
        for j, zone in enumerate(region.zones):
            if zone not in offered:
                yield Failure(
                    f"{machine} is not offered in zone {zone} ({region.region} offers it in {', '.join(offered)})",
                    ("regions", i, "zones", j),
                    f"write `zones: [{', '.join(offered)}]` in regions[{i}], or remove `zones` to use every one",
                )


@rule(Level.ERROR)
def gcp_quota_short(
    spec: GcpInferenceSpec, plan: InferencePlan, org: Organization, account_problems: list[str]
) -> Iterator[Failure]:
    """The project's GPU quotas (per region and metric, and GPUS_ALL_REGIONS) hold what every stack of the project
    needs at full size together; a stack that cannot be counted blocks too (unknown is not zero)."""
    project = org.accounts.get(spec.account)
    if not isinstance(project, GcpProject):
        return
    yield from quota_failures(spec.account, project, plan.quotas, account_problems, "max_replicas")


@rule(Level.ERROR)
def gcp_no_machine_type(spec: GcpInferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """`instance: auto` found a G2 machine type that holds the model in every region, or the spec names one."""
    if plan.choice.chosen is None and any(r.machine_type is None for r in spec.regions):
        yield Failure(
            plan.choice.reason,
            ("instance", "type"),
            "quantize (`precision: fp8` under model), or lower `model.context_length_tokens` or "
            "`model.max_concurrent_sequences`",
        )
    for c in plan.choice.candidates:
        if spec.instance.type != "auto" and c.instance_type == spec.instance.type and c.rejected:
            yield Failure(
                f"{c.instance_type}: {c.rejected}",
                ("instance", "type"),
                "write `type: auto` under instance (the smallest G2 type that holds the model), or a larger G2 type",
            )


@rule(Level.ERROR)
def gcp_throughput_above_bound(spec: GcpInferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A replica cannot serve more than its physical ceiling (the roofline AWS's fleet is held to)."""
    said: set[tuple[str | int, ...]] = set()
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        b, claimed, where = rp.bound, spec.throughput_of(region), spec.throughput_path(i)
        if b is None or where in said:
            continue
        physical = (b.physical_tokens_per_s or b.tokens_per_s) / spec.requests.output_tokens
        if claimed > physical:
            said.add(where)
            yield Failure(
                f"throughput_rps_per_replica {claimed:g} is above what {rp.instance_type} in {region.region} can do "
                f"at all: at most {physical:,.2f} requests/s at {spec.requests.output_tokens} output tokens",
                where,
                f"write a measured figure (`vllm bench serve`) at or below the published one: "
                f"`throughput_rps_per_replica: {floor_2(b.requests_per_s)}`",
            )


@rule(Level.ERROR)
def gcp_rollout_surge(spec: GcpInferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A regional MIG's maxSurge and maxUnavailable are 0 or at least its zone count (compute v1
    InstanceGroupManagerUpdatePolicy: "at least the number of zones" for regional groups)."""
    for name in ("max_surge", "max_unavailable"):
        value = getattr(spec.rollout, name)
        for rp in plan.regions:
            if 0 < value < len(rp.zones):
                yield Failure(
                    f"rollout.{name} {value} is below {rp.region}'s {len(rp.zones)} zones: Compute Engine refuses it",
                    ("rollout", name),
                    f"write `{name}: {max(len(r.zones) for r in plan.regions)}` under rollout (0 or at least the "
                    "zone count)",
                )
                break
    if spec.rollout.max_surge == 0 and spec.rollout.max_unavailable == 0:
        yield Failure("rollout: max_surge and max_unavailable are both 0: no update can proceed", ("rollout",))


@rule(Level.ERROR)
def gcp_schedule_clock(spec: GcpInferenceSpec) -> Iterator[Failure]:
    """A schedule on each region's clock needs the region's time zone in the catalog
    (clouds/gcp/catalog/data/g2.yaml)."""
    zones = gcp_book().time_zones
    unknown = sorted({r.region for r in spec.regions} - set(zones))
    for i, schedule in enumerate(spec.autoscaling.schedules):
        if schedule.time_zone == "region" and unknown:
            yield Failure(
                f"schedule {schedule.name!r} runs on each region's clock, but the catalog has no time zone for "
                f"{', '.join(unknown)}",
                ("autoscaling", "schedules", i, "time_zone"),
                f"write an IANA name, e.g. `time_zone: Etc/UTC` in autoscaling.schedules[{i}]",
            )


@rule(Level.ERROR)
def gcp_predictive_scaling(spec: GcpInferenceSpec) -> Iterator[Failure]:
    """Compute Engine's predictive autoscaling forecasts CPU utilization only (AutoscalingPolicy
    predictiveMethod), not the queue-depth metric this fleet scales on."""
    if spec.autoscaling.predictive:
        yield Failure(
            "predictive scaling is not available on Google for a Cloud Monitoring metric",
            ("autoscaling", "predictive"),
            "write `predictive: false` under autoscaling; `autoscaling.schedules` raise the floor before the daily "
            "peak",
        )


__all__ = [
    "gcp_machine_type_not_in_zone",
    "gcp_no_machine_type",
    "gcp_predictive_scaling",
    "gcp_project_purpose",
    "gcp_quota_short",
    "gcp_rollout_surge",
    "gcp_schedule_clock",
    "gcp_throughput_above_bound",
]


from gpuinfra.clouds.gcp.validators import filestore as _filestore  # noqa: E402,F401  (/home's rules)
from gpuinfra.clouds.gcp.validators import slurm as _slurm  # noqa: E402,F401  (the managed Slurm path's rules)
from gpuinfra.clouds.gcp.validators import training as _training  # noqa: E402,F401  (registers the training rules)
