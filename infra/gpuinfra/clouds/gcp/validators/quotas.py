"""A Google project's GPU quotas against what its stacks need together: one check for every Google workload (the
fleet's and the training cluster's rules differ only in what to lower)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.plan.quotas import QuotaNeed, blocks, requested_by_program
from gpuinfra.validators.base import Failure


def quota_failures(
    account: str, project: GcpProject, needs: Sequence[QuotaNeed], account_problems: list[str], lower: str
) -> Iterator[Failure]:
    """Each need the project's grant (or the program's own request) does not hold, and each stack of the project
    that cannot be counted (unknown is not zero); `lower` is the spec field that shrinks this stack's need."""
    for why in account_problems:
        yield Failure(
            f"the project's quota cannot be counted: {why}",
            ("account",),
            "fix or remove that stack (`gpuinfra validate <stack>` names its problem)",
        )
    for need in needs:
        if not blocks(need, requested_by_program(need, project.request_quota_increases)):
            continue
        others = ", ".join(f"{s} {v}" for s, v in need.held)
        yield Failure(
            f"{need.code} in {need.region}: the project {project.id} needs {need.vcpus} GPUs at full size"
            + (f" (this stack {need.own}; {others})" if need.held else "")
            + f", granted {need.granted or 0}",
            ("account",),
            f"write `{need.code}: {need.vcpus}` under accounts.{account}.quotas.{need.region} in the organization "
            f"file once Google grants it, or `request_quota_increases: true` on the project, or lower `{lower}`",
        )


__all__ = ["quota_failures"]
