"""Serving: replica bounds, memory fit per region, certificates, weights near every region."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.cluster import cluster_problems
from gpuinfra.plan.rollout import rollback_blocker
from gpuinfra.plan.serving import (
    HOST_RAM_SHARE,
    RegionPlan,
    fits,
    host_ram_fits,
    server_runs_on,
    tensor_parallel_problem,
)
from gpuinfra.spec import FleetRegion, InferenceSpec, Organization
from gpuinfra.validators.base import Failure, Level, floor_2, rule
from gpuinfra.validators.images import image_problem

GB = 1e9
QUANTIZED = {"fp32": "fp8", "bf16": "fp8", "fp16": "fp8", "fp8": "int8", "int8": "int4"}
"""The next smaller serving precision a hint offers (fp8 halves bf16's bytes on Ada and Hopper)."""


def _quantize(spec: InferenceSpec) -> str:
    """The YAML that quantizes the served weights one step, or '' when they are already int4."""
    smaller = QUANTIZED.get(spec.model.precision)
    return f"`precision: {smaller}` under model" if smaller else ""


def _type_edit(path: tuple[str | int, ...], name: str) -> str:
    """The YAML naming an instance type where the spec names it: a region's entry, or the fleet's instance."""
    if path and path[0] == "regions":
        return f"`instance_type: {name}` in regions[{path[1]}]"
    return f"`type: {name}` under instance"


def _sibling(info: InstanceType, catalog: Catalog, ok: Callable[[InstanceType], bool]) -> InstanceType | None:
    """The smallest type of the same family (host RAM, then accelerators) for which `ok` holds."""
    family = [i for i in catalog.instance_types if i.family == info.family and i.name != info.name and ok(i)]
    return min(family, key=lambda i: (i.memory_gib, i.accelerator_count, i.name), default=None)


def _serves(spec: InferenceSpec, plan: InferencePlan) -> Callable[[InstanceType], bool]:
    """Whether a type passes every per-type check of this module: the server drives it, the model and one
    sequence fit its accelerators, the weights its host RAM, and its accelerator count is a valid tensor-parallel
    size. A type a hint names must pass them all, or the hint trades one error for another."""
    m = spec.model

    def ok(i: InstanceType) -> bool:
        return (
            server_runs_on(spec.server_kind, i)
            and fits(i, plan.memory, m.gpu_memory_utilization, spec.engine)[0]
            and host_ram_fits(i, plan.memory.weights_bytes)
            and not tensor_parallel_problem(i.accelerator_count, m.attention_heads, m.kv_cache.kv_heads)
        )

    return ok


def _either(*choices: str) -> str:
    """'a, b, or c' of the non-empty choices."""
    kept = [c for c in choices if c]
    return kept[0] if len(kept) == 1 else ", ".join(kept[:-1]) + ", or " + kept[-1]


@rule(Level.ERROR)
def no_instance_fits(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """instance auto found no usable catalog type; the message gives the real reason (no type holds the
    model, or the ones that do lack a price in a region, host RAM, a valid tensor-parallel size, or the
    server cannot drive their accelerators)."""
    if plan.choice.chosen is None and any(r.instance_type is None for r in spec.regions):
        need = (
            f"{plan.memory.needed_bytes / GB:,.1f} GB (weights {plan.memory.weights_bytes / GB:,.1f} GB + "
            f"KV cache of one {spec.model.context_length_tokens:,}-token sequence "
            f"{plan.memory.kv_cache_bytes / GB:,.1f} GB)"
        )
        holds = plan.choice.reason == "no instance holds the model"
        yield Failure(
            (
                f"no instance holds {need}"
                if holds
                else f"instance auto found no usable type for {need}: {plan.choice.reason}"
            )
            + (f" on {spec.instance.gpu}" if spec.instance.gpu else ""),
            ("instance",),
            _either(
                f"lower `context_length_tokens: {spec.model.context_length_tokens}` under model",
                f"quantize ({_quantize(spec)})" if _quantize(spec) else "",
                "remove `gpu:` under instance" if spec.instance.gpu else "",
            )
            if holds
            else "name a type in each region's entry (`instance_type: <type>` in regions[]), or change `instance.gpu` "
            "or the model",
        )


@rule(Level.ERROR)
def model_does_not_fit_instance(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """A region's instance type cannot hold the weights plus one maximum-length sequence's KV cache after each
    GPU's activation workspace: vLLM refuses to start (plan/roofline.py serving_admits)."""
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        info = catalog.instance(rp.instance_type) if rp.instance_type else None
        if info is None:
            continue
        ok, usable = fits(info, plan.memory, spec.model.gpu_memory_utilization, spec.engine)
        if not ok:
            path = ("regions", i, "instance_type") if region.instance_type else ("instance", "type")
            yield Failure(
                f"{info.name} offers {usable / GB:,.1f} GB but the model needs {plan.memory.needed_bytes / GB:,.1f} GB "
                f"(weights {plan.memory.weights_bytes / GB:,.1f} GB + KV of one "
                f"{spec.model.context_length_tokens:,}-token sequence {plan.memory.kv_cache_bytes / GB:,.1f} GB) "
                f"in {region.region}: vLLM would refuse to start",
                path,
                "use "
                + _either(
                    "a type with more accelerator memory (`type: auto` under instance picks one)",
                    f"a shorter `model.context_length_tokens` than {spec.model.context_length_tokens}",
                    _quantize(spec),
                ),
            )


def _instances(
    spec: InferenceSpec, plan: InferencePlan, catalog: Catalog
) -> Iterator[tuple[int, FleetRegion, RegionPlan, InstanceType, tuple[str | int, ...]]]:
    """(index, region spec, region plan, instance info, spec path of its type) for regions with a known type."""
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        info = catalog.instance(rp.instance_type) if rp.instance_type else None
        if info is not None:
            path = ("regions", i, "instance_type") if region.instance_type else ("instance", "type")
            yield i, region, rp, info, path


@rule(Level.ERROR)
def adapters_on_kubernetes(spec: InferenceSpec) -> Iterator[Failure]:
    """Served adapters are fetched by the EC2 replicas' prefetch (from the registry, verified like the weights);
    a Kubernetes fleet's pods have no such fetch yet, so vLLM would start with --lora-modules naming paths that
    do not exist and refuse to serve."""
    if spec.platform == "kubernetes" and spec.model.adapters:
        yield Failure(
            f"{len(spec.model.adapters)} adapter(s) listed, but a Kubernetes fleet does not fetch adapters yet",
            ("model", "adapters"),
            "serve the adapters from an EC2 fleet (`platform: ec2`), or remove `model.adapters`",
        )


@rule(Level.ERROR)
def server_cannot_drive_accelerator(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """vLLM's CUDA image runs on NVIDIA GPUs only; Inferentia/Trainium need a Neuron build (server_kind neuron)."""
    for _, region, _, info, path in _instances(spec, plan, catalog):
        if not server_runs_on(spec.server_kind, info):
            hint = (
                "write `server_kind: neuron` with a Neuron build of vLLM as `server_image` and its flags in "
                f"`server_args`, or pick an NVIDIA type ({_type_edit(path, 'auto')})"
                if info.accelerator_kind in ("inferentia", "trainium")
                else "write `server_kind: cuda`, or pick an Inferentia/Trainium type for the neuron server"
            )
            yield Failure(
                f"{info.name} in {region.region} has {info.accelerator} ({info.accelerator_kind}); the "
                f"{spec.server_kind} server cannot run on it",
                path,
                hint,
            )


@rule(Level.ERROR)
def neuron_server_without_flags(spec: InferenceSpec) -> Iterator[Failure]:
    """A Neuron server is a different build with its own flags: refuse the CUDA image or empty flags."""
    if spec.server_kind != "neuron":
        return
    if spec.server_image.startswith("vllm/vllm-openai"):
        yield Failure(
            f"server_kind neuron with {spec.server_image}, vLLM's CUDA image",
            ("server_image",),
            "name a Neuron build of vLLM (the AWS Neuron Deep Learning Container's vLLM image) in "
            "`server_image: <registry>/<neuron vllm image>`",
        )
    if not spec.server_args:
        yield Failure(
            "server_kind neuron without server_args",
            ("server_args",),
            "give the flags the Neuron build needs, e.g. "
            f"`server_args: [--device, neuron, --max-model-len, '{spec.model.context_length_tokens}']`",
        )


@rule(Level.ERROR)
def invalid_tensor_parallel(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """The server shards the model over every accelerator of the instance: heads must divide over them."""
    m = spec.model
    for _, region, _, info, path in _instances(spec, plan, catalog):
        problem = tensor_parallel_problem(info.accelerator_count, m.attention_heads, m.kv_cache.kv_heads)
        if problem:
            fit = _sibling(info, catalog, _serves(spec, plan))
            yield Failure(
                f"{info.name} in {region.region}: --tensor-parallel-size {info.accelerator_count}: {problem}",
                path,
                f"pick a type whose accelerator count divides the model's heads: {_type_edit(path, fit.name)}"
                if fit
                else f"pick a type whose accelerator count divides the model's heads ({_type_edit(path, 'auto')})",
            )


@rule(Level.ERROR)
def host_ram_too_small(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """The server reads the weights through host memory: they must fit with room for the rest."""
    for _, region, _, info, path in _instances(spec, plan, catalog):
        if not host_ram_fits(info, plan.memory.weights_bytes):
            yield Failure(
                f"{info.name} in {region.region} has {info.memory_gib} GiB of host RAM for "
                f"{plan.memory.weights_bytes / GB:,.1f} GB of weights (at most {HOST_RAM_SHARE:.0%} of RAM): the "
                "server would be killed for memory while loading",
                path,
                "write "
                + _either(
                    _type_edit(path, bigger.name) + " (more host RAM)"
                    if (bigger := _sibling(info, catalog, _serves(spec, plan)))
                    else _type_edit(path, "auto"),
                    _quantize(spec),
                ),
            )


@rule(Level.ERROR)
def throughput_above_bound(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """A replica cannot serve more than its physical ceiling: decode steps at the full datasheet bandwidth
    (weights + batch x KV a step), time-shared with prefill at the full dense peak (plan/roofline.py)."""
    shape = spec.requests
    said: set[tuple[str | int, ...]] = set()
    for i, region, rp, info, _ in _instances(spec, plan, catalog):
        b, claimed, where = rp.bound, spec.throughput_of(region), spec.throughput_path(i)
        if b is None or where in said:
            continue
        physical = (b.physical_tokens_per_s or b.tokens_per_s) / shape.output_tokens
        if claimed > physical:
            said.add(where)  # the fleet's figure is named once, at its first region that cannot reach it
            yield Failure(
                f"throughput_rps_per_replica {claimed:g} is above what {info.name} in {region.region} can do at all: "
                f"{b.bandwidth_gb_s:,.0f} GB/s over {plan.memory.weights_bytes / GB:,.1f} GB of weights + "
                f"{b.batch} x KV of {shape.input_tokens + shape.output_tokens / 2:,.0f} tokens per step, with "
                f"prefill of {shape.input_tokens} tokens a request at the dense peak, is at most "
                f"{physical:,.2f} requests/s at {shape.output_tokens} output tokens (published servers reach "
                f"{b.requests_per_s:,.2f}, docs/planning.md)",
                where,
                f"write a measured figure (`vllm bench serve`) at or below the published one: "
                f"`throughput_rps_per_replica: {floor_2(b.requests_per_s)}`"
                + ("" if len(where) > 1 else f" (or give {region.region} its own in regions[{i}])")
                + "; or raise `model.max_concurrent_sequences`, or use a faster accelerator",
            )


CEILING_WARNING_SHARE = 0.8
"""A claim above 80% of the calibrated ceiling is warned about: published servers reach the ceiling within about
15% (tests/plan/test_calibration.py), so such a figure needs its benchmark."""


@rule(Level.WARNING)
def throughput_near_ceiling(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """The claimed rate is above 80% of what published servers reach on this hardware (the calibrated ceiling)."""
    shape = spec.requests
    said: set[tuple[str | int, ...]] = set()
    for i, region, rp, info, _ in _instances(spec, plan, catalog):
        b, claimed, where = rp.bound, spec.throughput_of(region), spec.throughput_path(i)
        if b is None or b.physical_tokens_per_s is None or where in said:
            continue
        if CEILING_WARNING_SHARE * b.requests_per_s < claimed <= b.physical_tokens_per_s / shape.output_tokens:
            said.add(where)
            yield Failure(
                f"throughput_rps_per_replica {claimed:g} is {claimed / b.requests_per_s:.0%} of the calibrated "
                f"ceiling of {info.name} in {region.region} ({b.requests_per_s:,.2f} requests/s, "
                f"{b.tokens_per_s:,.0f} tokens/s at batch {b.batch}): published servers reach "
                "the calibrated ceiling within about 15%, not more (docs/planning.md)",
                where,
                "keep the figure only with its benchmark (`vllm bench serve` at the spec's request shape), else write "
                f"`throughput_rps_per_replica: {floor_2(CEILING_WARNING_SHARE * b.requests_per_s)}`",
            )


@rule(Level.ERROR)
def latency_target_unreachable(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """At full batch the answer alone takes output_tokens / steps-per-second: above the target, no replica
    count helps."""
    shape = spec.requests
    for _, region, rp, info, _ in _instances(spec, plan, catalog):
        b = rp.bound
        if b is not None and b.generation_seconds > shape.latency_target_seconds:
            yield Failure(
                f"{info.name} in {region.region}: {shape.output_tokens} output tokens at {b.steps_per_s:,.1f} "
                f"steps/s (batch {b.batch}) take {b.generation_seconds:,.1f} s, above latency_target_seconds "
                f"{shape.latency_target_seconds:g}",
                ("requests", "latency_target_seconds"),
                "use "
                + _either(
                    f"a lower `model.max_concurrent_sequences` than {spec.model.max_concurrent_sequences}",
                    _quantize(spec),
                    f"`latency_target_seconds: {math.ceil(b.generation_seconds)}` under requests",
                ),
            )


@rule(Level.ERROR)
def internet_facing_without_protection(spec: InferenceSpec) -> Iterator[Failure]:
    """An OpenAI-compatible API on the internet needs authentication and a WAF (rate limits, managed rules)."""
    access = spec.access
    if access.scheme != "internet-facing":
        return
    if access.auth == "none":
        yield Failure(
            "an internet-facing fleet without authentication: anyone may use (and pay for) the model",
            ("access", "auth"),
            "write `auth: api_key` under access, or `scheme: internal`",
        )
    if access.waf is None:
        yield Failure(
            "an internet-facing fleet without a WAF web ACL (no rate limit, no managed rules)",
            ("access", "waf"),
            "remove `waf: null` from access (the default web ACL), or write `scheme: internal` under access",
        )
    elif spec.platform == "ec2" and spec.load_balancer.type == "nlb":
        yield Failure(
            "AWS WAF attaches to Application Load Balancers, not Network Load Balancers",
            ("load_balancer", "type"),
            "write `type: alb` under load_balancer for an internet-facing fleet",
        )
    elif spec.platform == "kubernetes":
        yield Failure(
            "AWS WAF attaches to Application Load Balancers; the Kubernetes fleet's Service is a Network Load "
            "Balancer, so an internet-facing one would have no web ACL",
            ("access", "scheme"),
            "write `scheme: internal` under access (reach it over the VPC), or front it with your own ALB Ingress and "
            "WAF",
        )
    if (
        spec.platform == "kubernetes"
        and access.auth == "api_key"
        and spec.kubernetes
        and not spec.kubernetes.api_key_secret
    ):
        yield Failure(
            "auth api_key on kubernetes needs the Secret holding the key",
            ("kubernetes", "api_key_secret"),
            f"write `api_key_secret: {spec.name}-api-key` under kubernetes: a Secret with the key api-key in the "
            "fleet's namespace",
        )


@rule(Level.ERROR)
def hpa_without_adapter(spec: InferenceSpec) -> Iterator[Failure]:
    """An autoscaling/v2 HPA on an External metric needs an external-metrics API server in the cluster."""
    kube = spec.kubernetes
    if kube is not None and kube.autoscaler == "hpa" and kube.external_metrics_adapter is None:
        yield Failure(
            "autoscaler hpa tracks an External metric, but Kubernetes has no external-metrics API by itself",
            ("kubernetes", "external_metrics_adapter"),
            "write `external_metrics_adapter: prometheus-adapter` (installed in the cluster), or `autoscaler: keda`",
        )


KEDA_ONLY = {
    "queue_metric": "the adapter rule sums the engine's own waiting and running series",
    "prometheus_url": "the HPA reads the external-metrics API, not Prometheus",
}
"""kubernetes settings only KEDA's ScaledObject reads, and what an `autoscaler: hpa` fleet reads instead
(pulumi/components/inference/external_metric.py)."""


@rule(Level.WARNING)
def keda_setting_under_hpa(spec: InferenceSpec) -> Iterator[Failure]:
    """A setting only KEDA reads, written for an `autoscaler: hpa` fleet: it changes nothing, so the scaling the
    author meant to tune is not the scaling the fleet gets."""
    kube = spec.kubernetes
    if kube is None or kube.autoscaler != "hpa":
        return
    for field, instead in KEDA_ONLY.items():
        if getattr(kube, field) is not None:
            yield Failure(
                f"kubernetes.{field} is read only by KEDA, and this fleet scales with an HPA: {instead}",
                ("kubernetes", field),
                f"delete `{field}`, or write `autoscaler: keda`",
            )


@rule(Level.WARNING)
def scaling_target_above_batch(spec: InferenceSpec) -> Iterator[Failure]:
    """A target above max_concurrent_sequences scales only once requests already queue on every replica."""
    target = spec.autoscaling.target_queue_depth_per_replica
    seqs = spec.model.max_concurrent_sequences
    if target > seqs:
        yield Failure(
            f"target_queue_depth_per_replica {target:g} is above max_concurrent_sequences {seqs}: replicas are "
            "added only after requests queue",
            ("autoscaling", "target_queue_depth_per_replica"),
            f"write `target_queue_depth_per_replica: {max(1, round(seqs * 0.75))}` under autoscaling (fewer than "
            f"{seqs} requests in flight per replica)",
        )


@rule(Level.WARNING)
def demand_exceeds_max(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """Peak demand needs more replicas than max_replicas allows: latency will suffer at peak."""
    for i, rp in enumerate(plan.regions):
        if rp.demand_replicas > rp.max_replicas:
            yield Failure(
                f"{rp.region}: peak needs {rp.demand_replicas} replicas but max_replicas is {rp.max_replicas}",
                ("regions", i, "max_replicas"),
                f"write `max_replicas: {rp.demand_replicas}` in the region's entry",
            )


@rule(Level.ERROR)
def region_without_weights_replica(spec: InferenceSpec, org: Organization) -> Iterator[Failure]:
    """Cold start reads weights locally: every region needs a registry replica (or the home bucket)."""
    registry = org.registry
    if registry is None:
        return
    local = {registry.region, *registry.replica_regions}
    for i, region in enumerate(spec.regions):
        if region.region not in local:
            yield Failure(
                f"no registry replica in {region.region}: cold starts would pull weights across regions",
                ("regions", i, "region"),
                f"add {region.region} to the organization file's registry: `replica_regions: "
                f"[{', '.join([*sorted(registry.replica_regions), region.region])}]`",
            )


@rule(Level.ERROR)
def endpoint_without_certificate(spec: InferenceSpec) -> Iterator[Failure]:
    """Every regional endpoint terminates TLS (an ALB's HTTPS listener, an NLB's TLS listener, or the
    Kubernetes Service's aws-load-balancer-ssl-cert annotation), so each region needs an ACM certificate of
    that region: what the policy security-https-listeners demands of the same resources."""
    listener = {"alb": "HTTPS listener", "nlb": "TLS listener"}[spec.load_balancer.type]
    where = listener if spec.platform == "ec2" else "load balancer Service (aws-load-balancer-ssl-cert)"
    for i, region in enumerate(spec.regions):
        if region.certificate_arn is None:
            yield Failure(
                f"{region.region} has no certificate_arn for the {where}",
                ("regions", i, "certificate_arn"),
                f"write `certificate_arn: arn:aws:acm:{region.region}:<account>:certificate/<id>` in regions[{i}] "
                "(an ACM certificate of that region)",
            )
        elif region.certificate_arn.split(":")[3] != region.region:
            yield Failure(
                f"certificate_arn is in {region.certificate_arn.split(':')[3]}, not {region.region}",
                ("regions", i, "certificate_arn"),
                f"ACM certificates are regional: write `certificate_arn: arn:aws:acm:{region.region}:<account>:"
                f"certificate/<id>` in regions[{i}]",
            )


@rule(Level.WARNING)
def scale_in_faster_than_scale_out(spec: InferenceSpec) -> Iterator[Failure]:
    """Scaling in faster than out drops replicas that take minutes to come back."""
    a = spec.autoscaling
    if a.scale_in_cooldown_seconds < a.scale_out_cooldown_seconds:
        yield Failure(
            f"scale_in_cooldown_seconds {a.scale_in_cooldown_seconds} < scale_out_cooldown_seconds "
            f"{a.scale_out_cooldown_seconds}",
            ("autoscaling", "scale_in_cooldown_seconds"),
            f"write `scale_in_cooldown_seconds: {a.scale_out_cooldown_seconds}` (or more) under autoscaling",
        )


@rule(Level.WARNING)
def training_class_instance(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """Training hardware (the catalog's families.yaml role) serves rarely cost-efficiently."""
    for i, rp in enumerate(plan.regions):
        info = catalog.instance(rp.instance_type) if rp.instance_type else None
        if info and catalog.is_training_class(info.family):
            path = ("regions", i, "instance_type") if spec.regions[i].instance_type else ("instance", "type")
            hint = (
                f"serve on a serving family ({', '.join(catalog.serving_families())}): "
                f"{_type_edit(path, 'auto')} picks the cheapest that holds the model"
            )
            yield Failure(f"{info.name} is a training-class instance", path, hint)


@rule(Level.ERROR)
def accelerator_needs_load_balancers(spec: InferenceSpec) -> Iterator[Failure]:
    """Global Accelerator points at load balancer ARNs, which gpuinfra owns only on platform ec2."""
    if spec.platform == "kubernetes" and spec.global_routing.type == "global_accelerator":
        yield Failure(
            "global_accelerator needs the fleet's own load balancers (platform ec2)",
            ("global_routing", "type"),
            "write `type: route53_latency` under global_routing (platform kubernetes)",
        )


@rule(Level.ERROR)
def kubeconfig_per_region(spec: InferenceSpec) -> Iterator[Failure]:
    """On Kubernetes every region needs its cluster's kubeconfig, and only fleet regions may have one."""
    if spec.kubernetes is None:
        return
    regions = {r.region for r in spec.regions}
    for i, region in enumerate(spec.regions):
        if region.region not in spec.kubernetes.kubeconfig_keys:
            yield Failure(
                f"no kubeconfig key for {region.region}",
                ("regions", i, "region"),
                f"write `{region.region}: gpuinfra:kube-{region.region}` under kubernetes.kubeconfig_keys (the config "
                "key of that region's cluster)",
            )
    for name in spec.kubernetes.kubeconfig_keys:
        if name not in regions:
            yield Failure(
                f"kubeconfig for {name}, which is not a fleet region",
                ("kubernetes", "kubeconfig_keys", name),
                f"remove `{name}` from `kubernetes.kubeconfig_keys`, or add a regions[] entry for it",
            )


@rule(Level.ERROR)
def cluster_components_missing(
    spec: InferenceSpec, plan: InferencePlan, org: Organization, catalog: Catalog
) -> Iterator[Failure]:
    """The Load Balancer Controller, Prometheus Operator, KEDA, GPU feature discovery, Karpenter, the pods' IAM
    trust and the API-key Secret are each cluster's (one of each per cluster): the stack creates only objects they
    act on, so each cluster must declare them at versions those objects need (fail closed: nothing declared is
    nothing there). The training side's on-premises `site-components-missing` is the same check."""
    if spec.kubernetes is None:
        return
    instance = next((rp.instance_type for rp in plan.regions if rp.instance_type), None)
    device = catalog.device(instance) if instance else None
    for problem in cluster_problems(spec, org, device.node_label if device else None):
        yield Failure(f"{problem.field}: {problem.message}", ("kubernetes", "kubeconfig_keys"), problem.fix)


@rule(Level.ERROR)
def serving_image_not_pinned(spec: InferenceSpec) -> Iterator[Failure]:
    """EC2 replicas boot one pinned image: `resolve:ssm:.../latest` is resolved at every launch, so a new
    driver would enter the fleet with the next scale-out, unannounced and unrolled-back (as training refuses)."""
    if spec.platform != "ec2":
        return
    for i, region in enumerate(spec.regions):
        image = region.image_id or spec.image_id
        problem = image_problem(image)
        if problem:
            path: tuple[str | int, ...] = ("regions", i, "image_id") if region.image_id else ("image_id",)
            yield Failure(
                f"the replica image of {region.region} is not pinned: {problem}",
                path,
                "set image_id (or regions[].image_id) to an AMI id or resolve:ssm:<parameter>:<version>, e.g. "
                "`aws ssm get-parameter-history --name <parameter>` for the version to pin",
            )


@rule(Level.WARNING)
def rollout_without_rollback(spec: InferenceSpec) -> Iterator[Failure]:
    """A rollout whose canary alarm fires can stop but not roll back: EC2 Auto Scaling does not roll back to a
    launch template whose ImageId is a Systems Manager parameter (RollbackInstanceRefresh; plan/rollout.py)."""
    if spec.platform != "ec2":
        return
    fleet_wide = []
    for i, region in enumerate(spec.regions):
        image = region.image_id or spec.image_id
        why = rollback_blocker(image)
        if why is None:
            continue
        if region.image_id is None:
            fleet_wide.append(region.region)
            continue
        yield Failure(
            f"{region.region}: a rollout stops at its canary when the rollout alarm fires but cannot roll back: {why}",
            ("regions", i, "image_id"),
            ROLLBACK_HINT,
        )
    if fleet_wide:
        yield Failure(
            f"{', '.join(fleet_wide)}: a rollout stops at its canary when the rollout alarm fires but cannot roll "
            f"back: {rollback_blocker(spec.image_id)}",
            ("image_id",),
            ROLLBACK_HINT,
        )


ROLLBACK_HINT = (
    "pin the AMI id the parameter version resolves to (`aws ssm get-parameter --name <parameter>:<version>` in "
    "each region, then regions[].image_id: ami-...) so AWS can roll a failed rollout back"
)


@rule(Level.WARNING)
def server_image_not_pinned(spec: InferenceSpec) -> Iterator[Failure]:
    """A tag can be moved: replicas launched a week apart may run different server builds behind one endpoint."""
    if spec.server_image_digest is None and "@sha256:" not in spec.server_image:
        yield Failure(
            f"server_image {spec.server_image} is not pinned by digest: a moved tag changes the server under a "
            "running fleet, with no rollout",
            ("server_image_digest",),
            f"write `server_image_digest: sha256:<digest>` (`docker buildx imagetools inspect {spec.server_image}` "
            "shows it)",
        )


@rule(Level.WARNING)
def accelerator_without_domain_record(spec: InferenceSpec) -> Iterator[Failure]:
    """Clients must reach a Global Accelerator by the name its regions' certificates carry: an alias record
    in the domain's hosted zone (Route 53 DG, "Routing traffic to an AWS Global Accelerator")."""
    routing = spec.global_routing
    if routing.type == "global_accelerator" and routing.hosted_zone_id is None:
        yield Failure(
            f"no DNS record for {routing.domain_name}: clients using the accelerator's own name get a certificate "
            "for another name",
            ("global_routing", "hosted_zone_id"),
            f"write `hosted_zone_id: <zone id>` under global_routing: the Route 53 zone of {routing.domain_name} "
            "(gpuinfra adds the alias record)",
        )


__all__ = [
    "accelerator_needs_load_balancers",
    "accelerator_without_domain_record",
    "cluster_components_missing",
    "demand_exceeds_max",
    "host_ram_too_small",
    "hpa_without_adapter",
    "internet_facing_without_protection",
    "invalid_tensor_parallel",
    "keda_setting_under_hpa",
    "kubeconfig_per_region",
    "latency_target_unreachable",
    "model_does_not_fit_instance",
    "neuron_server_without_flags",
    "no_instance_fits",
    "region_without_weights_replica",
    "scale_in_faster_than_scale_out",
    "scaling_target_above_batch",
    "server_cannot_drive_accelerator",
    "server_image_not_pinned",
    "serving_image_not_pinned",
    "throughput_above_bound",
    "training_class_instance",
]
