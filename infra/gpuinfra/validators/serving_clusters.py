"""A Kubernetes fleet's clusters must be recognisable by the policy pack under the Pulumi CLI.

`pulumi preview --policy-pack policies` hands the pack a stack's secrets in plain text (pulumi-policy 1.21,
`deserialize.py` `_deserialize_property` returns a secret's `value`), so `separation-kubernetes` reads every
kubeconfig and refuses one that points at no registered cluster (policy/rules/clusters.py). It recognises a
cluster by its `server:` or its CA (`ca_sha256:`); a cluster registered with neither is unrecognisable, so the
fleet's own, legitimate kubeconfig is refused at `pulumi up` while the in-process preview (secrets blinded) is green.
This says so where the stack is checked, before any deploy (review expert-inference-2, D1).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan.cluster import cluster_for
from gpuinfra.spec import InferenceSpec, Organization
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def kubeconfig_cluster_unidentified(spec: InferenceSpec, org: Organization) -> Iterator[Failure]:
    """A fleet region's cluster registers neither `server:` nor `ca_sha256:`: under the Pulumi CLI the pack reads
    the kubeconfig and cannot tell it from another cluster's, so it refuses the legitimate one (fail closed)."""
    if spec.kubernetes is None:
        return
    for region, key in spec.kubernetes.kubeconfig_keys.items():
        found = cluster_for(org, key)
        if found is None:
            continue  # an unregistered key is cluster-components-missing's (and the pack's) refusal
        name, cluster = found
        if cluster.server or cluster.ca_sha256:
            continue
        yield Failure(
            f"cluster {name} ({region}) registers neither server: nor ca_sha256: in the organization file, so "
            "`pulumi preview --policy-pack policies`, which reads the kubeconfig, refuses even this fleet's own "
            "(separation-kubernetes: points at no cluster the organization file registers)",
            ("kubernetes", "kubeconfig_keys", region),
            f"write `server: https://<endpoint>` under clusters.{name} in the organization file (EKS: `aws eks "
            "describe-cluster --name <cluster> --query cluster.endpoint`), or its CA fingerprint as `ca_sha256:`",
        )


__all__ = ["kubeconfig_cluster_unidentified"]
