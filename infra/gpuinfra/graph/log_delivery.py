"""Who AWS delivers load balancer access logs as, per region: what the log bucket's policy grants and what the
pack accepts as the one cross-account grant a log bucket may carry.

ELB writes Application Load Balancer access logs as an AWS-owned account per region (ELB user guide, "Enable
access logs for your Application Load Balancer", step 2: "elb-account-id"); regions opened since August 2022 use
the service principal instead. The table is terraform-provider-aws's `aws_elb_service_account` data source
(internal/service/elb/service_account_data_source.go, accountIDPerRegionMap, commercial regions), the same one
pulumi-aws's `aws.elb.get_service_account` reads. Network Load Balancer logs (TLS listeners) go through CloudWatch
vended-log delivery (`delivery.logs.amazonaws.com`; ELB user guide for NLB, "Access logs", bucket policy)."""

from __future__ import annotations

ELB_LOG_ACCOUNTS = {
    "af-south-1": "098369216593",
    "ap-east-1": "754344448648",
    "ap-northeast-1": "582318560864",
    "ap-northeast-2": "600734575887",
    "ap-northeast-3": "383597477331",
    "ap-south-1": "718504428378",
    "ap-southeast-1": "114774131450",
    "ap-southeast-2": "783225319266",
    "ap-southeast-3": "589379963580",
    "ca-central-1": "985666609251",
    "eu-central-1": "054676820928",
    "eu-north-1": "897822967062",
    "eu-south-1": "635631232127",
    "eu-west-1": "156460612806",
    "eu-west-2": "652711504416",
    "eu-west-3": "009996457667",
    "me-south-1": "076674570225",
    "sa-east-1": "507241528517",
    "us-east-1": "127311923021",
    "us-east-2": "033677994240",
    "us-west-1": "027434742980",
    "us-west-2": "797873946194",
}
ELB_LOG_SERVICE = "logdelivery.elasticloadbalancing.amazonaws.com"
"""The principal for regions not in the table (opened since August 2022)."""
VENDED_LOG_SERVICE = "delivery.logs.amazonaws.com"


def elb_log_principal(region: str) -> dict[str, str]:
    """The `Principal` an ALB access-log bucket policy grants s3:PutObject to in `region`."""
    account = ELB_LOG_ACCOUNTS.get(region)
    return {"AWS": f"arn:aws:iam::{account}:root"} if account else {"Service": ELB_LOG_SERVICE}


__all__ = ["ELB_LOG_ACCOUNTS", "ELB_LOG_SERVICE", "VENDED_LOG_SERVICE", "elb_log_principal"]
