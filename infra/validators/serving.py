"""Serving: replica bounds, memory fit per region, certificates, weights near every region."""

from __future__ import annotations

from collections.abc import Iterator

from infra.catalog import Catalog
from infra.plan import InferencePlan
from infra.plan.serving import fits, training_class
from infra.spec import InferenceSpec, Organization
from infra.validators.base import Failure, Level, rule

GB = 1e9


@rule(Level.ERROR)
def no_instance_fits(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """instance auto found no catalog type that holds weights plus KV cache."""
    if plan.choice.chosen is None and any(r.instance_type is None for r in spec.regions):
        yield Failure(
            f"no instance holds {plan.memory.needed_bytes / GB:,.1f} GB "
            f"(weights {plan.memory.weights_bytes / GB:,.1f} GB + KV cache {plan.memory.kv_cache_bytes / GB:,.1f} GB)"
            + (f" on {spec.instance.gpu}" if spec.instance.gpu else ""),
            ("instance",),
            "lower max_concurrent_sequences or context_length_tokens, quantize (fp8/int8), or drop the gpu filter",
        )


@rule(Level.ERROR)
def model_does_not_fit_instance(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """A region's instance type cannot hold the weights plus the KV cache for the target concurrency."""
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        info = catalog.instance(rp.instance_type) if rp.instance_type else None
        if info is None:
            continue
        ok, usable = fits(info, plan.memory, spec.model.gpu_memory_utilization)
        if not ok:
            path = ("regions", i, "instance_type") if region.instance_type else ("instance", "type")
            yield Failure(
                f"{info.name} offers {usable / GB:,.1f} GB but the model needs {plan.memory.needed_bytes / GB:,.1f} GB "
                f"(weights {plan.memory.weights_bytes / GB:,.1f} GB + KV {plan.memory.kv_cache_bytes / GB:,.1f} GB) "
                f"in {region.region}",
                path,
                "pick a type with more accelerator memory, or lower max_concurrent_sequences",
            )


@rule(Level.WARNING)
def demand_exceeds_max(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """Peak demand needs more replicas than max_replicas allows: latency will suffer at peak."""
    for i, rp in enumerate(plan.regions):
        if rp.demand_replicas > rp.max_replicas:
            yield Failure(
                f"{rp.region}: peak needs {rp.demand_replicas} replicas but max_replicas is {rp.max_replicas}",
                ("regions", i, "max_replicas"),
                f"raise max_replicas to {rp.demand_replicas}",
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
                f"add {region.region} to registry.replica_regions in the organization file",
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
                "add the ACM certificate ARN of this region",
            )
        elif region.certificate_arn.split(":")[3] != region.region:
            yield Failure(
                f"certificate_arn is in {region.certificate_arn.split(':')[3]}, not {region.region}",
                ("regions", i, "certificate_arn"),
                "ACM certificates are regional: use one from this region",
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
            "make scale-in slower than scale-out",
        )


@rule(Level.WARNING)
def training_class_instance(spec: InferenceSpec, plan: InferencePlan, catalog: Catalog) -> Iterator[Failure]:
    """P and Trn instances are for training; serving on them is rarely cost-efficient."""
    for i, rp in enumerate(plan.regions):
        info = catalog.instance(rp.instance_type) if rp.instance_type else None
        if info and training_class(info.family):
            path = ("regions", i, "instance_type") if spec.regions[i].instance_type else ("instance", "type")
            yield Failure(f"{info.name} is a training-class instance", path, "serve on L4, L40S or Inferentia2")


@rule(Level.ERROR)
def accelerator_needs_load_balancers(spec: InferenceSpec) -> Iterator[Failure]:
    """Global Accelerator points at load balancer ARNs, which gpuinfra owns only on platform ec2."""
    if spec.platform == "kubernetes" and spec.global_routing.type == "global_accelerator":
        yield Failure(
            "global_accelerator needs the fleet's own load balancers (platform ec2)",
            ("global_routing", "type"),
            "use route53_latency on kubernetes",
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
                f"add kubernetes.kubeconfig_keys.{region.region}",
            )
    for name in spec.kubernetes.kubeconfig_keys:
        if name not in regions:
            yield Failure(
                f"kubeconfig for {name}, which is not a fleet region",
                ("kubernetes", "kubeconfig_keys", name),
                "remove it or add the region",
            )


__all__ = [
    "accelerator_needs_load_balancers",
    "demand_exceeds_max",
    "endpoint_without_certificate",
    "kubeconfig_per_region",
    "model_does_not_fit_instance",
    "no_instance_fits",
    "region_without_weights_replica",
    "scale_in_faster_than_scale_out",
    "training_class_instance",
]
