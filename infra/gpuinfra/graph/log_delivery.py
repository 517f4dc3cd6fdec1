"""Who AWS delivers load balancer access logs as, per region: what the log bucket's policy grants and what the
pack accepts as the one cross-account grant a log bucket may carry.

ELB writes Application Load Balancer access logs as an AWS-owned account per region (ELB user guide, "Enable
access logs for your Application Load Balancer", step 2: "elb-account-id"; the table is catalog data,
log_delivery.yaml); regions opened since August 2022 use the service principal instead. Network Load Balancer
logs (TLS listeners) go through CloudWatch vended-log delivery (`delivery.logs.amazonaws.com`; ELB user guide for
NLB, "Access logs", bucket policy)."""

from __future__ import annotations

from gpuinfra.catalog import load_catalog

ELB_LOG_SERVICE = "logdelivery.elasticloadbalancing.amazonaws.com"
"""The principal for regions the catalog lists no account for (opened since August 2022)."""
VENDED_LOG_SERVICE = "delivery.logs.amazonaws.com"


def elb_log_account(region: str) -> str | None:
    """ELB's log-delivery account in `region`, from the catalog."""
    return load_catalog().elb_log_account(region)


def elb_log_principal(region: str) -> dict[str, str]:
    """The `Principal` an ALB access-log bucket policy grants s3:PutObject to in `region`."""
    account = elb_log_account(region)
    return {"AWS": f"arn:aws:iam::{account}:root"} if account else {"Service": ELB_LOG_SERVICE}


__all__ = ["ELB_LOG_SERVICE", "VENDED_LOG_SERVICE", "elb_log_account", "elb_log_principal"]
