"""Kubernetes NetworkPolicy, evaluated offline: may a pod open a connection to a destination?

The semantics, each from the Kubernetes documentation, "Network Policies" (concepts/services-networking/
network-policies) and the networking.k8s.io/v1 API reference:
- a pod is isolated for egress when any NetworkPolicy of its namespace selects it (spec.podSelector) and lists
  Egress in policyTypes; a pod no policy isolates may connect anywhere;
- policies are additive: an isolated pod's connection is allowed when any rule of any policy selecting it allows it;
- an egress rule allows a connection when its `to` is empty or one of its peers matches, and its `ports` is empty or
  one of them matches (protocol defaults to TCP; `endPort` makes a range);
- a peer is a podSelector (pods of the policy's namespace), a namespaceSelector (pods of matching namespaces), both
  (pods matching both), or an ipBlock (a CIDR, less its `except` CIDRs), which the docs say applies to traffic
  outside the cluster's pods, such as node (hostNetwork) addresses and link-local services;
- label selectors: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist), ANDed; an empty selector
  matches everything.
Named ports are not modelled (a policy using one is refused, not guessed).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Destination:
    """Where a pod connects: another pod (labels, namespace and its labels) or an address outside the pod network."""

    port: int
    protocol: str = "TCP"
    ip: str | None = None
    pod_labels: Mapping[str, str] | None = None
    namespace: str | None = None
    namespace_labels: Mapping[str, str] = field(default_factory=dict)


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        present = key in labels
        ok = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }.get(op)
        if ok is None:
            raise ValueError(f"unknown selector operator {op}")
        if not ok:
            return False
    return True


def _peer(peer: Mapping[str, Any], policy_ns: str, dest: Destination) -> bool:
    block = peer.get("ipBlock")
    if block is not None:
        if dest.ip is None:
            return False
        ip = ipaddress.ip_address(dest.ip)
        inside = ip in ipaddress.ip_network(block["cidr"])
        return inside and not any(ip in ipaddress.ip_network(e) for e in block.get("except") or [])
    if dest.pod_labels is None:
        return False
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if namespaces is None and dest.namespace != policy_ns:
        return False
    if namespaces is not None and not selects(namespaces, dest.namespace_labels):
        return False
    return pods is None or selects(pods, dest.pod_labels)


def _port(port: Mapping[str, Any], dest: Destination) -> bool:
    if port.get("protocol", "TCP") != dest.protocol:
        return False
    number = port.get("port")
    if number is None:
        return True
    if isinstance(number, str):
        raise ValueError(f"named port {number!r} is not modelled")
    return number <= dest.port <= port.get("endPort", number)


def egress_allowed(
    policies: Sequence[Mapping[str, Any]], namespace: str, pod_labels: Mapping[str, str], dest: Destination
) -> bool:
    """May a pod with `pod_labels` in `namespace` connect to `dest`? `policies`: NetworkPolicy objects (metadata,
    spec), camelCase as the API takes them."""
    isolating = [
        p
        for p in policies
        if p["metadata"].get("namespace") == namespace
        and "Egress" in (p["spec"].get("policyTypes") or (["Ingress", "Egress"] if "egress" in p["spec"] else []))
        and selects(p["spec"].get("podSelector", {}), pod_labels)
    ]
    if not isolating:
        return True
    for policy in isolating:
        for rule in policy["spec"].get("egress") or []:
            peers, ports = rule.get("to") or [], rule.get("ports") or []
            if (not peers or any(_peer(p, namespace, dest) for p in peers)) and (
                not ports or any(_port(p, dest) for p in ports)
            ):
                return True
    return False


__all__ = ["Destination", "egress_allowed", "selects"]
