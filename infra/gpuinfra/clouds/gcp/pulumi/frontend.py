"""One global external Application Load Balancer for every region: a global address, a Google-managed
certificate, an HTTPS proxy, a URL map and one backend service whose backends are every region's groups
(balanced by rate per replica, so a full or failed region's users spill to the next closest healthy one), with
Cloud Armor in front: the API key required, rate limits per key and per address."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec

MAX_DRAIN = 3600
"""connectionDraining.drainingTimeoutSec: at most 3600 (compute v1 ConnectionDraining)."""
DEFAULT_RULE = 2147483647
"""Cloud Armor's default rule's priority (the lowest)."""


@dataclass(frozen=True)
class Backend:
    group: pulumi.Input[str]
    rate_per_replica: float


def armor(name: str, spec: GcpInferenceSpec, parent: pulumi.Resource) -> gcp.compute.SecurityPolicy:
    a = spec.frontend.armor

    def limit(priority: int, key: str, count: int, header: str | None) -> dict[str, object]:
        return {
            "priority": priority,
            "action": "throttle",
            "match": {"versioned_expr": "SRC_IPS_V1", "config": {"src_ip_ranges": ["*"]}},
            "rate_limit_options": {
                "conform_action": "allow",
                "exceed_action": "deny(429)",
                "enforce_on_key": key,
                **({"enforce_on_key_name": header} if header else {}),
                "rate_limit_threshold": {"count": count, "interval_sec": a.interval_seconds},
            },
            "description": f"at most {count} requests per {a.interval_seconds} s per {header or 'address'}",
        }

    rules: list[dict[str, object]] = [
        limit(2000, "HTTP_HEADER", a.rate_limit_per_key, "Authorization"),
        limit(3000, "IP", a.rate_limit_per_ip, None),
        {
            "priority": DEFAULT_RULE,
            "action": "allow",
            "description": "default",
            "match": {"versioned_expr": "SRC_IPS_V1", "config": {"src_ip_ranges": ["*"]}},
        },
    ]
    if a.require_api_key:
        rules.insert(
            0,
            {
                "priority": 1000,
                "action": "deny(403)",
                "match": {"expr": {"expression": "!has(request.headers['authorization'])"}},
                "description": "requests without an API key never reach a replica",
            },
        )
    return gcp.compute.SecurityPolicy(name, name=name, type="CLOUD_ARMOR", rules=rules, opts=opts(parent))


class GlobalFrontend(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        spec: GcpInferenceSpec,
        backends: list[Backend],
        health_check: gcp.compute.HealthCheck,
        drain_seconds: int,
        parent: pulumi.Resource,
    ) -> None:
        super().__init__("gpuinfra:inference:GcpFrontend", name, None, opts(parent))
        policy = armor(f"{name}-armor", spec, self)
        service = gcp.compute.BackendService(
            f"{name}-backend",
            name=f"{name}-backend",
            load_balancing_scheme="EXTERNAL_MANAGED",
            protocol="HTTP",
            port_name="http",
            timeout_sec=max(30, int(spec.requests.latency_target_seconds * 3)),
            connection_draining_timeout_sec=min(MAX_DRAIN, drain_seconds),
            health_checks=health_check.id,
            security_policy=policy.id,
            backends=[
                {
                    "group": b.group,
                    "balancing_mode": "RATE",
                    "max_rate_per_instance": b.rate_per_replica,
                    "capacity_scaler": 1.0,
                }
                for b in backends
            ],
            log_config={"enable": True, "sample_rate": 1.0},
            opts=opts(self),
        )
        url_map = gcp.compute.URLMap(f"{name}-urls", name=f"{name}-urls", default_service=service.id, opts=opts(self))
        cert = gcp.compute.ManagedSslCertificate(
            f"{name}-cert", name=f"{name}-cert", managed={"domains": [spec.frontend.domain_name]}, opts=opts(self)
        )
        proxy = gcp.compute.TargetHttpsProxy(
            f"{name}-https", name=f"{name}-https", url_map=url_map.id, ssl_certificates=[cert.id], opts=opts(self)
        )
        self.address = gcp.compute.GlobalAddress(f"{name}-ip", name=f"{name}-ip", ip_version="IPV4", opts=opts(self))
        gcp.compute.GlobalForwardingRule(
            f"{name}-https",
            name=f"{name}-https",
            load_balancing_scheme="EXTERNAL_MANAGED",
            ip_protocol="TCP",
            port_range="443",
            ip_address=self.address.address,
            target=proxy.id,
            opts=opts(self),
        )
        self.register_outputs({"address": self.address.address})


__all__ = ["Backend", "GlobalFrontend", "armor"]
