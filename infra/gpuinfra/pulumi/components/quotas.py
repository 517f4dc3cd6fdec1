"""Service quota increase requests, emitted when the organization file asks for them."""

from __future__ import annotations

from collections.abc import Iterable

import pulumi
import pulumi_aws as aws

from gpuinfra.plan import QuotaNeed


def request_increases(
    prefix: str,
    needs: Iterable[QuotaNeed],
    providers: dict[str, pulumi.ProviderResource],
    parent: pulumi.Resource | None = None,
) -> list[aws.servicequotas.ServiceQuota]:
    """One ServiceQuota per code whose need exceeds the grant, asking for exactly the need."""
    requests = []
    for need in needs:
        if need.code is None or not need.shortfall or need.region not in providers:
            continue
        requests.append(
            aws.servicequotas.ServiceQuota(
                f"{prefix}-quota-{need.region}-{need.code}",
                service_code="ec2",
                quota_code=need.code,
                value=float(need.vcpus),
                opts=pulumi.ResourceOptions(parent=parent, provider=providers[need.region]),
            )
        )
    return requests


__all__ = ["request_increases"]
