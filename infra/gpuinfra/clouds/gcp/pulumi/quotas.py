"""Quota requests as code: a cloudquota.SQuotaPreference for each metric the project's stacks need more of than
Google granted, when the project sets request_quota_increases (the preference asks for the project's total)."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.catalog import gcp_book
from gpuinfra.clouds.gcp.plan.quotas import GLOBAL
from gpuinfra.plan.quotas import QuotaNeed, requested_by_program


def request_quotas(name: str, project: str, needs: list[QuotaNeed], parent: pulumi.Resource) -> None:
    ids = {q.metric: q.cloud_quotas_id for q in gcp_book().quotas}
    for need in needs:
        wanted = requested_by_program(need, True)
        if wanted is None or need.code is None:
            continue
        gcp.cloudquota.SQuotaPreference(
            f"{name}-quota-{need.region}-{need.code.lower()}",
            parent=f"projects/{project}",
            service="compute.googleapis.com",
            quota_id=ids[need.code],
            dimensions={} if need.region == GLOBAL else {"region": need.region},
            quota_config={"preferred_value": str(wanted)},
            justification=f"gpuinfra: the project's stacks need {wanted} at full size ({need.code})",
            opts=pulumi.ResourceOptions(parent=parent),
        )


__all__ = ["request_quotas"]
