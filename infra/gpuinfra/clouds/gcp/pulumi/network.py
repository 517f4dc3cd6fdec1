"""The fleet's VPC network: one custom-mode network, a subnet and a Cloud NAT per region (replicas have no
external address), and the firewall that admits only Google's load balancers and health checks."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts

HEALTH_CHECK_RANGES = ["35.191.0.0/16", "130.211.0.0/22"]
"""Where Google Front Ends and health checks connect from (cloud.google.com/load-balancing/docs/health-check-concepts
#ip-ranges, for the global external Application Load Balancer)."""


class FleetNetwork(pulumi.ComponentResource):
    def __init__(self, name: str, regions: dict[str, str], port: int, tag: str, parent: pulumi.Resource) -> None:
        super().__init__("gpuinfra:inference:GcpNetwork", name, None, opts(parent))
        self.network = gcp.compute.Network(
            f"{name}-vpc",
            name=f"{name}-vpc",
            auto_create_subnetworks=False,
            routing_mode="GLOBAL",
            opts=opts(self),
        )
        self.subnets: dict[str, gcp.compute.Subnetwork] = {}
        for region, cidr in regions.items():
            self.subnets[region] = gcp.compute.Subnetwork(
                f"{name}-{region}",
                name=f"{name}-{region}",
                region=region,
                network=self.network.id,
                ip_cidr_range=cidr,
                private_ip_google_access=True,
                log_config={"aggregation_interval": "INTERVAL_5_SEC", "flow_sampling": 0.5},
                opts=opts(self),
            )
            router = gcp.compute.Router(
                f"{name}-{region}-router",
                name=f"{name}-{region}",
                region=region,
                network=self.network.id,
                opts=opts(self),
            )
            gcp.compute.RouterNat(
                f"{name}-{region}-nat",
                name=f"{name}-{region}",
                region=region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                log_config={"enable": True, "filter": "ERRORS_ONLY"},
                opts=opts(self),
            )
        gcp.compute.Firewall(
            f"{name}-allow-lb",
            name=f"{name}-allow-lb",
            network=self.network.id,
            direction="INGRESS",
            source_ranges=HEALTH_CHECK_RANGES,
            target_tags=[tag],
            allows=[{"protocol": "tcp", "ports": [str(port)]}],
            opts=opts(self),
        )
        self.register_outputs({"network": self.network.id})


__all__ = ["HEALTH_CHECK_RANGES", "FleetNetwork"]
