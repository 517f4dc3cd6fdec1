"""Who AWS delivers load balancer access logs as, per region: what the log bucket's policy grants and what the
pack accepts as the one cross-account grant a log bucket may carry.

ELB writes Application Load Balancer access logs as an AWS-owned account per region (ELB user guide, "Enable
access logs for your Application Load Balancer", step 2: "elb-account-id"; the table is the owning cloud's catalog
data, AWS's clouds/aws/catalog/data/log_delivery.yaml, reached through the registry's `log_delivery` part); regions
opened since August 2022 use the service principal instead. Network Load Balancer logs (TLS listeners) go through
CloudWatch vended-log delivery (`delivery.logs.amazonaws.com`; ELB user guide for NLB, "Access logs", bucket
policy)."""

from __future__ import annotations

from typing import Protocol

from gpuinfra.clouds import owner_of
from gpuinfra.graph import tokens

ELB_LOG_SERVICE = "logdelivery.elasticloadbalancing.amazonaws.com"
"""The principal for regions the catalog lists no account for (opened since August 2022)."""
VENDED_LOG_SERVICE = "delivery.logs.amazonaws.com"


class LogDelivery(Protocol):
    """A cloud's `log_delivery` part's answer: the account its load balancers deliver access logs as, per region."""

    def account(self, region: str) -> str | None: ...


def log_delivery(type_token: str) -> LogDelivery | None:
    """The log-delivery facts of the cloud that owns `type_token`; None when no cloud owns the type or its cloud
    registers none (the part is optional): a judge that would let a grant through on them must then refuse it (fail
    closed)."""
    owner = owner_of(type_token)
    if owner is None or owner.parts.log_delivery is None:
        return None
    facts: LogDelivery = owner.part("log_delivery")()
    return facts


def elb_log_account(region: str) -> str | None:
    """ELB's log-delivery account in `region`, from the catalog of the cloud that owns load balancers (a registry
    without one is a programming error: LookupError, never a guessed principal)."""
    facts = log_delivery(tokens.LOAD_BALANCER)
    if facts is None:
        raise LookupError(f"no cloud registers whom {tokens.LOAD_BALANCER} delivers access logs as (log_delivery)")
    return facts.account(region)


def elb_log_principal(region: str) -> dict[str, str]:
    """The `Principal` an ALB access-log bucket policy grants s3:PutObject to in `region`."""
    account = elb_log_account(region)
    return {"AWS": f"arn:aws:iam::{account}:root"} if account else {"Service": ELB_LOG_SERVICE}


__all__ = [
    "ELB_LOG_SERVICE",
    "VENDED_LOG_SERVICE",
    "LogDelivery",
    "elb_log_account",
    "elb_log_principal",
    "log_delivery",
]
