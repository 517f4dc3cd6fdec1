"""The cluster's fabric on Google Cloud, as Cluster Toolkit's A3 Ultra blueprints build it: one regular VPC per
gVNIC (a subnet each, the series' MTU), one RoCE VPC whose network profile is the zone's `<zone>-vpc-roce` with one
subnet per MRDMA NIC, a Cloud NAT for the first (system) network, firewalls admitting the nodes to each other, and
the compact placement policy (compute.ResourcePolicy) unless a reservation carries its own placement."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


def gvnic_vpc(name: str, index: int) -> tuple[str, str]:
    """The i-th gVNIC's VPC and subnet names (GKE's GKENetworkParamSet names them: networks.py)."""
    return f"{name}-net-{index}", f"{name}-sub-{index}"


def rdma_vpc(name: str, index: int) -> tuple[str, str]:
    """The RoCE VPC's name and its i-th MRDMA NIC's subnet."""
    return f"{name}-rdma", f"{name}-rdma-{index}"


@dataclass(frozen=True)
class FabricArgs:
    spec: GcpTrainingSpec
    project: str
    gvnics: int
    mrdma_nics: int
    mtu: int
    roce_profile: str | None
    """`<zone>-vpc-roce`, or None when the spec leaves the RoCE VPC out (refused for A3 Ultra and A4)."""


def _gvnic_network(name: str, index: int, args: FabricArgs, parent: pulumi.Resource) -> gcp.compute.Subnetwork:
    vpc, subnet = gvnic_vpc(name, index)
    net = gcp.compute.Network(
        f"{name}-net-{index}",
        name=vpc,
        auto_create_subnetworks=False,
        mtu=args.mtu,
        opts=opts(parent),
    )
    ranges = []
    if index == 0:
        ranges = [
            {"range_name": PODS_RANGE, "ip_cidr_range": args.spec.network.pods_cidr},
            {"range_name": SERVICES_RANGE, "ip_cidr_range": args.spec.network.services_range()},
        ]
    gcp.compute.Firewall(
        f"{name}-net-{index}-internal",
        name=f"{name}-net-{index}-internal",
        network=net.id,
        direction="INGRESS",
        source_ranges=[args.spec.network.gvnic_subnet(index)] + ([args.spec.network.pods_cidr] if index == 0 else []),
        allows=[{"protocol": "tcp"}, {"protocol": "udp"}, {"protocol": "icmp"}],
        opts=opts(parent),
    )
    return gcp.compute.Subnetwork(
        f"{name}-sub-{index}",
        name=subnet,
        network=net.id,
        region=args.spec.compute.region,
        ip_cidr_range=args.spec.network.gvnic_subnet(index),
        private_ip_google_access=True,
        secondary_ip_ranges=ranges,
        opts=opts(parent),
    )


def _roce(name: str, args: FabricArgs, parent: pulumi.Resource) -> list[gcp.compute.Subnetwork]:
    """The RoCE VPC (its zone's RDMA network profile) and a subnet per MRDMA NIC."""
    assert args.roce_profile is not None
    net = gcp.compute.Network(
        f"{name}-rdma",
        name=rdma_vpc(name, 0)[0],
        auto_create_subnetworks=False,
        mtu=args.mtu,
        network_profile=f"projects/{args.project}/global/networkProfiles/{args.roce_profile}",
        opts=opts(parent),
    )
    return [
        gcp.compute.Subnetwork(
            f"{name}-rdma-{i}",
            name=rdma_vpc(name, i)[1],
            network=net.id,
            region=args.spec.compute.region,
            ip_cidr_range=args.spec.network.rdma_subnet(i),
            opts=opts(parent),
        )
        for i in range(args.mrdma_nics)
    ]


class TrainingFabric(pulumi.ComponentResource):
    """The node networks and the placement policy."""

    def __init__(self, name: str, args: FabricArgs, parent: pulumi.Resource) -> None:
        super().__init__("gpuinfra:training:GcpFabric", name, None, opts(parent))
        self.gvnic_subnets = [_gvnic_network(name, i, args, self) for i in range(args.gvnics)]
        self.system_network = self.gvnic_subnets[0].network
        self.rdma_subnets = _roce(name, args, self) if args.roce_profile else []
        router = gcp.compute.Router(
            f"{name}-router",
            name=f"{name}-router",
            region=args.spec.compute.region,
            network=self.system_network,
            opts=opts(self),
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            name=f"{name}-nat",
            router=router.name,
            region=args.spec.compute.region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            opts=opts(self),
        )
        self.placement = self._placement(name, args)
        self.register_outputs({"rdma_subnets": [s.id for s in self.rdma_subnets]})

    def _placement(self, name: str, args: FabricArgs) -> gcp.compute.ResourcePolicy | None:
        """Compact placement: every node close on the fabric (a reservation brings its own placement: Google
        then ignores the stack's, so none is made; queued provisioning, flex-start's, takes none: Cluster Toolkit
        examples/gke-dws-flex-start, "Compact placement policy is not supported")."""
        compute = args.spec.compute
        if compute.placement != "compact" or compute.capacity.model in ("reservation", "flex_start"):
            return None
        return gcp.compute.ResourcePolicy(
            f"{name}-compact",
            name=f"{name}-compact",
            region=compute.region,
            group_placement_policy={"collocation": "COLLOCATED", "vm_count": compute.node_count},
            opts=opts(self),
        )


__all__ = ["PODS_RANGE", "SERVICES_RANGE", "FabricArgs", "TrainingFabric", "gvnic_vpc", "rdma_vpc"]
