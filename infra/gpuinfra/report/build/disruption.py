"""What a change does to running instances, for the review's headline: the groups whose instances roll (an
instance refresh: a new launch template version), the resources replaced, and the nodes added or removed by a
resize. Money comes after this: a reviewer must see "1 node group rolls" before "+$0.00/month"."""

from __future__ import annotations

from collections.abc import Collection

from gpuinfra.report.model import ResourceChangeOut

NODE_COUNTS = (
    "scalingConfiguration.minInstanceCount",  # AWS PCS compute node group (static nodes: min = max)
    "scalingConfig.desiredSize",  # EKS managed node group
    "desiredCapacity",  # EC2 Auto Scaling group
    "minSize",  # an Auto Scaling group without a desired capacity runs its minimum
)
"""The property of a group that says how many instances run, in the order looked for."""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _names(rows: list[ResourceChangeOut], limit: int = 3) -> str:
    shown = ", ".join(r.name for r in rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def node_delta(r: ResourceChangeOut) -> int:
    """Instances a group's update adds (negative: removes), from the first NODE_COUNTS property it changes."""
    for path in NODE_COUNTS:
        for c in r.changes:
            if c.path == path and isinstance(c.before, int | float) and isinstance(c.after, int | float):
                return int(c.after) - int(c.before)
    return 0


def disruption(rows: list[ResourceChangeOut], said: Collection[tuple[str, str]] = ()) -> list[str]:
    """The headline's account of what the change does to what runs: rolls, replacements, nodes added/removed.
    Empty when nothing running is touched. `said`: (type, name) of replacements the headline already names as
    stored data destroyed."""
    rolls = [r for r in rows if r.action == "update" and any(c.effect == "refresh" for c in r.changes)]
    replaced = [r for r in rows if r.action == "replace" and (r.type, r.name) not in said]
    added = sum(max(node_delta(r), 0) for r in rows if r.action == "update")
    removed = sum(max(-node_delta(r), 0) for r in rows if r.action == "update")
    out = []
    if rolls:
        verb = "rolls its instances" if len(rolls) == 1 else "roll their instances"
        out.append(f"{_plural(len(rolls), 'group', 'groups')} {verb} ({_names(rolls)})")
    if replaced:
        out.append(f"{_plural(len(replaced), 'resource', 'resources')} replaced ({_names(replaced)})")
    if added:
        out.append(f"{_plural(added, 'node', 'nodes')} added")
    if removed:
        out.append(f"{_plural(removed, 'node', 'nodes')} removed")
    return out


__all__ = ["NODE_COUNTS", "disruption", "node_delta"]
