"""The one check every Google workload's project rule makes: the stack's `account` names a Google project (not an
AWS account) of the workload's own purpose. Each workload's rule gives only its words (which docs page, what the
workload does on AWS instead, how it states the separation)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.spec import Organization, with_article
from gpuinfra.validators.base import Failure

ACCOUNT = ("account",)


def project_failures(
    account: str, org: Organization, workload: str, aws_hint: str, separation: str, purpose_hint: str
) -> Iterator[Failure]:
    """Why `account` cannot hold a Google `workload` stack: an AWS account (`aws_hint` says where to go instead),
    or a project of another purpose (`separation` says why not, `purpose_hint` what to write); nothing for an
    unknown account, which load's reference check names."""
    entry = org.accounts.get(account)
    if entry is None:
        return
    if not isinstance(entry, GcpProject):
        yield Failure(f"account {account!r} is an AWS account, not a Google Cloud project", ACCOUNT, aws_hint)
    elif not entry.serves(workload):
        yield Failure(
            f"project {account!r} ({entry.id}) is {with_article(entry.purpose)} project: {separation} (separation)",
            ACCOUNT,
            purpose_hint,
        )


__all__ = ["project_failures"]
