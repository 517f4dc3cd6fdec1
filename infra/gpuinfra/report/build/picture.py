"""A stack's picture: its main parts (scheduler and node groups, file system, buckets and keys, network and
fabric, load balancers), grouped by region, with an edge where one part depends on another (directly or
through plumbing such as subnets, launch templates and security groups). A diff marks what changed."""

from __future__ import annotations

from collections.abc import Mapping

from gpuinfra.graph import Graph, Resource
from gpuinfra.report.model import PictureNodeOut, PictureOut

PARTS = {
    "aws-native:pcs:Cluster": "PCS cluster",
    "aws-native:pcs:ComputeNodeGroup": "PCS node group",
    "aws-native:pcs:Queue": "Slurm queue",
    "aws:eks/cluster:Cluster": "EKS cluster",
    "aws:eks/nodeGroup:NodeGroup": "EKS node group",
    "aws:autoscaling/group:Group": "Auto Scaling group",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "FSx for Lustre",
    "aws:s3/bucket:Bucket": "S3 bucket",
    "aws:kms/key:Key": "KMS key",
    "aws:ec2/vpc:Vpc": "VPC",
    "aws:ec2/placementGroup:PlacementGroup": "cluster placement group (EFA fabric)",
    "aws:lb/loadBalancer:LoadBalancer": "load balancer",
    "aws:globalaccelerator/accelerator:Accelerator": "Global Accelerator",
    "aws:route53/record:Record": "DNS record",
}
"""Resource types drawn, and what a reviewer calls them."""
DEPTH = 4
"""How many plumbing resources an edge may pass through."""
STATUS = {"create": "added", "update": "changed", "replace": "replaced", "delete": "deleted"}


def _region(graph: Graph, r: Resource) -> str:
    provider = graph.by_urn.get(r.provider or "")
    region = provider.inputs.get("region") if provider else None
    return str(region) if region else graph.stack


def _reaches(graph: Graph, start: Resource, drawn: set[str]) -> set[str]:
    """Drawn resources `start` depends on, through at most DEPTH undrawn ones."""
    found: set[str] = set()
    frontier, seen = [start], {start.urn}
    for _ in range(DEPTH + 1):
        nxt = []
        for r in frontier:
            for d in graph.dependencies_of(r):
                if d.urn in seen:
                    continue
                seen.add(d.urn)
                (found.add(d.urn) if d.urn in drawn else nxt.append(d))
        frontier = nxt
    return found


def picture(graph: Graph, actions: Mapping[str, str] | None = None, gone: Graph | None = None) -> PictureOut:
    """The drawn parts of `graph`; `actions` (type::name -> create/update/replace/delete) marks them, and the
    drawn parts of `gone` (the base) that `actions` deletes are added, marked deleted."""
    actions = actions or {}
    parts = [r for r in graph.resources if r.type in PARTS]
    deleted = [r for r in (gone.resources if gone else ()) if r.type in PARTS and actions.get(r.key) == "delete"]
    ids = {r.urn: f"n{i}" for i, r in enumerate([*parts, *deleted])}
    nodes = [
        PictureNodeOut(
            id=ids[r.urn],
            label=f"{PARTS[r.type]}: {r.name}",
            group=_region(g, r),
            status=STATUS.get(actions.get(r.key, ""), "same"),  # type: ignore[arg-type]
        )
        for g, rs in ((graph, parts), (gone, deleted))
        if g is not None
        for r in rs
    ]
    drawn = {r.urn for r in parts}
    edges = sorted({(ids[r.urn], ids[d]) for r in parts for d in _reaches(graph, r, drawn)})
    return PictureOut(nodes=nodes, edges=edges)


__all__ = ["PARTS", "picture"]
