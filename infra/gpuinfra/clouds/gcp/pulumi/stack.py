"""A Google inference stack: one provider pinned to the project, the network, the replicas' identity and
weights buckets, each region's groups, the global load balancer, and the quota requests; its outline is
`build_fleet`, what the cloud registry hands the program for a Google stack."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds import cloud
from gpuinfra.clouds.gcp.pulumi.base import opts, provider, stack_labels
from gpuinfra.clouds.gcp.pulumi.budget import stack_budget
from gpuinfra.clouds.gcp.pulumi.frontend import Backend, GlobalFrontend
from gpuinfra.clouds.gcp.pulumi.identity import FleetIdentity
from gpuinfra.clouds.gcp.pulumi.network import FleetNetwork
from gpuinfra.clouds.gcp.pulumi.quotas import request_quotas
from gpuinfra.clouds.gcp.pulumi.replicas import RegionReplicas, ReplicaArgs
from gpuinfra.clouds.gcp.pulumi.weights import WeightsReplication
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpProject
from gpuinfra.load import Inputs
from gpuinfra.plan import InferencePlan


class GcpFleet(pulumi.ComponentResource):
    def __init__(self, inputs: Inputs, plan: InferencePlan, project: GcpProject) -> None:
        spec = inputs.spec
        assert isinstance(spec, GcpInferenceSpec)
        name = spec.name
        labels = stack_labels(inputs.stack.name, spec, inputs.org.org.default_tags)
        google = provider(f"gcp-{spec.account}", project, labels)
        super().__init__("gpuinfra:inference:GcpFleet", name, None, pulumi.ResourceOptions(providers=[google]))
        subnets = {r.region: spec.subnet_of(i) for i, r in enumerate(spec.regions)}
        network = FleetNetwork(name, subnets, spec.health_check.server_port, name, self)
        buckets = {r.region: f"{spec.weights.bucket}-{r.region}" for r in plan.regions}
        identity = FleetIdentity(name, project.id, buckets, labels, self)
        replication = WeightsReplication(name, project.id, identity.buckets, self)
        h = spec.health_check
        health = gcp.compute.HealthCheck(
            f"{name}-health",
            name=f"{name}-health",
            check_interval_sec=h.check_interval_seconds,
            timeout_sec=h.timeout_seconds,
            healthy_threshold=h.healthy_threshold,
            unhealthy_threshold=h.unhealthy_threshold,
            http_health_check={"port": h.server_port, "request_path": h.path},
            log_config={"enable": True},
            opts=opts(self),
        )
        backends = []
        for fleet_region, rp in zip(spec.regions, plan.regions, strict=True):
            args = ReplicaArgs(
                spec,
                rp,
                project.id,
                network.subnets[rp.region].id,
                identity.account.email,
                identity.secret.secret_id,
                buckets[rp.region],
                health.id,
                name,
                labels,
                cloud("gcp").spot_notice_seconds,
                replication.source_region,
                spec.weights.replication_wait_minutes * 60,
                replication.jobs.get(rp.region),
            )
            replicas = RegionReplicas(f"{name}-{rp.region}", args, self)
            rate = spec.throughput_of(fleet_region)
            backends += [Backend(g.instance_group, rate) for g in replicas.groups]
        drain = max((r.drain_seconds for r in plan.regions), default=300)
        self.frontend = GlobalFrontend(name, spec, backends, health, drain, self)
        if project.request_quota_increases:
            request_quotas(name, project.id, plan.quotas, self)
        stack_budget(name, labels["gpuinfra-stack"], project, plan, self)
        self.register_outputs({"address": self.frontend.address.address})


def build_fleet(inputs: Inputs, plan: InferencePlan) -> None:
    """The program of a Google inference stack (the cloud registry's `program` part for gcp)."""
    spec = inputs.spec
    assert isinstance(spec, GcpInferenceSpec)
    project = inputs.org.org.accounts[spec.account]
    assert isinstance(project, GcpProject), "the validators refuse a fleet outside a Google project"
    fleet = GcpFleet(inputs, plan, project)
    pulumi.export("fleet", spec.name)
    pulumi.export("project", project.id)
    pulumi.export("domain_name", spec.frontend.domain_name)
    pulumi.export("regions", [r.region for r in plan.regions])
    pulumi.export("address", fleet.frontend.address.address)


__all__ = ["GcpFleet", "build_fleet"]
