"""InferenceFleet: every region of the fleet plus the global routing in front of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

from gpuinfra.catalog.engines import Engine
from gpuinfra.plan import InferencePlan
from gpuinfra.pulumi.components.inference.region import InferenceRegion, RegionArgs
from gpuinfra.pulumi.components.inference.routing import GlobalRouting, RegionalTarget, RoutingArgs, zone_vpcs
from gpuinfra.spec import InferenceSpec, Registry
from gpuinfra.spec.org import Alerts

TYPE = "gpuinfra:inference:Fleet"


@dataclass(frozen=True)
class FleetArgs:
    spec: InferenceSpec
    plan: InferencePlan
    registry: Registry
    registry_account_id: str
    account_id: str
    tags: dict[str, str]
    engine: Engine
    """The model server the fleet runs (the catalog's engines.yaml row for spec.engine)."""
    alerts: Alerts | None = None
    """The account's `alerts` (organization file), which every region's paging alarms reach."""
    time_zones: Mapping[str, str] = field(default_factory=dict)
    """Region -> local IANA zone (the catalog's), the clock of schedules that ask for the region's own."""


class InferenceFleet(pulumi.ComponentResource):
    regions: dict[str, InferenceRegion]

    def __init__(
        self,
        name: str,
        args: FleetArgs,
        providers: Mapping[str, pulumi.ProviderResource],
        routing_provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        here = pulumi.ResourceOptions(parent=self)
        spec = args.spec
        self.regions = {}
        for i, (fleet_region, region_plan) in enumerate(zip(spec.regions, args.plan.regions, strict=True)):
            self.regions[region_plan.region] = InferenceRegion(
                f"{name}-{region_plan.region}",
                RegionArgs(
                    spec=spec,
                    fleet_region=fleet_region,
                    vpc_cidr=spec.vpc_cidr_of(i),
                    region_plan=region_plan,
                    plan=args.plan,
                    registry=args.registry,
                    registry_account_id=args.registry_account_id,
                    account_id=args.account_id,
                    tags=args.tags,
                    engine=args.engine,
                    alerts=args.alerts,
                    time_zones=args.time_zones,
                ),
                providers[region_plan.region],
                here,
            )
        routing = spec.global_routing
        GlobalRouting(
            f"{name}-routing",
            RoutingArgs(
                kind=routing.type,
                domain_name=routing.domain_name,
                hosted_zone_id=routing.hosted_zone_id,
                health_check_path=spec.load_balancer.health_check_path,
                targets=[
                    RegionalTarget(
                        region,
                        r.endpoint.load_balancer.dns_name,
                        r.endpoint.load_balancer.zone_id,
                        r.endpoint.load_balancer.arn,
                        r.endpoint.health_alarm.name if r.endpoint.health_alarm else None,
                    )
                    for region, r in self.regions.items()
                ],
                private_vpcs=zone_vpcs(spec, {region: r.vpc_id for region, r in self.regions.items()}),
            ),
            routing_provider,
            here,
        )
        self.register_outputs({"regions": list(self.regions), "domain_name": routing.domain_name})


__all__ = ["TYPE", "FleetArgs", "InferenceFleet"]
