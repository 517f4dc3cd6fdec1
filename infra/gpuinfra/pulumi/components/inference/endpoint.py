"""A region's entry point: an ALB with an HTTPS listener and an HTTP->HTTPS redirect (or an NLB with a
TLS listener), the target group whose health check is the server's health path, and for an ALB an AWS
WAF web ACL (a rate-based rule per client IP and AWS managed rule groups) associated with it.

The HTTPS listener forwards only the OpenAI API (/v1/*) and the health path; everything else (vLLM's
/metrics among it) gets a 404 from the load balancer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.alerts import notify
from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.inference.access_logs import PREFIX, access_log_bucket, waf_logging
from gpuinfra.spec.inference import Waf

TYPE = "gpuinfra:inference:Endpoint"
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"


@dataclass(frozen=True)
class EndpointArgs:
    kind: str
    """alb or nlb."""
    vpc_id: pulumi.Input[str]
    public_subnet_ids: Sequence[pulumi.Input[str]]
    security_group_id: pulumi.Input[str]
    certificate_arn: str | None
    server_port: int
    health_check_path: str
    healthy_threshold: int
    unhealthy_threshold: int
    interval_seconds: int
    internal: bool = False
    deregistration_seconds: int = 300
    """Longest generation in flight when a replica leaves (plan: max output tokens at the decode rate)."""
    waf: Waf | None = None
    tags: dict[str, str] | None = None
    account_id: str = ""
    region: str = ""
    """Where the access-log bucket lives and whose logs it takes (the load balancer's account and region)."""
    log_bucket: str = ""
    """The access-log bucket's name (`log_bucket_name`)."""
    log_retention_days: int = 365
    alarm_topic_arn: pulumi.Input[str] | None = None
    """The region's alert topic (the account's `alerts`), which the no-healthy-replica alarm pages."""


def log_bucket_name(fleet: str, account_id: str, region: str) -> str:
    """At most 63 characters, the S3 limit: a fleet name (32 at most) + account (12) + region (14) + "lb"."""
    return f"{fleet}-{account_id}-{region}-lb"


COMMON_RULE_SET = "AWSManagedRulesCommonRuleSet"
BODY_SIZE_RULE = "SizeRestrictions_BODY"
"""The common rule set blocks request bodies over 8 KB; prompts are larger, so this rule only counts."""
BODY_RULES = (
    BODY_SIZE_RULE,
    "CrossSiteScripting_BODY",
    "GenericLFI_BODY",
    "GenericRFI_BODY",
    "EC2MetaDataSSRF_BODY",
)
"""The core rule set's rules that inspect the request body (AWS WAF DG, "Core rule set (CRS) managed rule
group"), all Block by default. A model API's body is a prompt, and prompts routinely hold HTML, `<script>`,
`../` paths and metadata URLs as text: these rules are set to Count (they still label and log), while the
CRS keeps blocking on headers, URI and query; auth (the API key) and the rate limit guard the body."""
KNOWN_BAD_INPUTS = "AWSManagedRulesKnownBadInputsRuleSet"
KNOWN_BAD_BODY_RULES = ("Log4JRCE_BODY", "JavaDeserializationRCE_BODY")
"""The known-bad-inputs group's rules that inspect the body (AWS WAF DG, "Known bad inputs managed rule group"): a
prompt that quotes a Log4j lookup or a serialized Java object is text to a model, so they count too (their
header, URI and query variants keep blocking)."""
COUNTED_BODY_RULES = {COMMON_RULE_SET: BODY_RULES, KNOWN_BAD_INPUTS: KNOWN_BAD_BODY_RULES}


def _visibility(metric: str) -> aws.wafv2.WebAclVisibilityConfigArgs:
    return aws.wafv2.WebAclVisibilityConfigArgs(
        cloudwatch_metrics_enabled=True, metric_name=metric, sampled_requests_enabled=True
    )


def _rule_visibility(metric: str) -> aws.wafv2.WebAclRuleVisibilityConfigArgs:
    return aws.wafv2.WebAclRuleVisibilityConfigArgs(
        cloudwatch_metrics_enabled=True, metric_name=metric, sampled_requests_enabled=True
    )


def rate_per_key(limit: int, priority: int) -> aws.wafv2.WebAclRuleArgs:
    """A rate limit per API key: the aggregation key is the Authorization header (AWS WAF DG, "Rate-based rule
    aggregation options": custom keys; a request without the key component is not counted by this rule), so
    one leaked key is limited across every IP, and clients sharing a NAT each keep their own budget."""
    from pulumi_aws.wafv2 import _inputs as waf_inputs

    header = waf_inputs.WebAclRuleStatementRateBasedStatementCustomKeyHeaderArgs(
        name="authorization",
        text_transformations=[
            waf_inputs.WebAclRuleStatementRateBasedStatementCustomKeyHeaderTextTransformationArgs(
                priority=0, type="NONE"
            )
        ],
    )
    return aws.wafv2.WebAclRuleArgs(
        name="rate-per-key",
        priority=priority,
        action=aws.wafv2.WebAclRuleActionArgs(block=aws.wafv2.WebAclRuleActionBlockArgs()),
        statement=aws.wafv2.WebAclRuleStatementArgs(
            rate_based_statement=aws.wafv2.WebAclRuleStatementRateBasedStatementArgs(
                limit=limit,
                aggregate_key_type="CUSTOM_KEYS",
                custom_keys=[waf_inputs.WebAclRuleStatementRateBasedStatementCustomKeyArgs(header=header)],
                evaluation_window_sec=300,
            )
        ),
        visibility_config=_rule_visibility("rate-per-key"),
    )


def web_acl_rules(waf: Waf) -> list[aws.wafv2.WebAclRuleArgs]:
    """Rate limit per client IP first (priority 0), per API key next when set, then the managed rule groups in
    the spec's order."""
    rules = [
        aws.wafv2.WebAclRuleArgs(
            name="rate-per-ip",
            priority=0,
            action=aws.wafv2.WebAclRuleActionArgs(block=aws.wafv2.WebAclRuleActionBlockArgs()),
            statement=aws.wafv2.WebAclRuleStatementArgs(
                rate_based_statement=aws.wafv2.WebAclRuleStatementRateBasedStatementArgs(
                    limit=waf.rate_limit_per_ip, aggregate_key_type="IP", evaluation_window_sec=300
                )
            ),
            visibility_config=_rule_visibility("rate-per-ip"),
        )
    ]
    if waf.rate_limit_per_key is not None:
        rules.append(rate_per_key(waf.rate_limit_per_key, priority=1))
    first = len(rules)
    for i, group in enumerate(waf.managed_rule_groups, start=first):
        overrides = (
            [
                aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideArgs(
                    name=rule,
                    action_to_use=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseArgs(
                        count=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseCountArgs()
                    ),
                )
                for rule in COUNTED_BODY_RULES[group]
            ]
            if group in COUNTED_BODY_RULES
            else None
        )
        rules.append(
            aws.wafv2.WebAclRuleArgs(
                name=group,
                priority=i,
                override_action=aws.wafv2.WebAclRuleOverrideActionArgs(
                    none=aws.wafv2.WebAclRuleOverrideActionNoneArgs()
                ),
                statement=aws.wafv2.WebAclRuleStatementArgs(
                    managed_rule_group_statement=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementArgs(
                        name=group, vendor_name="AWS", rule_action_overrides=overrides
                    )
                ),
                visibility_config=_rule_visibility(group),
            )
        )
    return rules


def healthy_hosts_alarm(
    name: str,
    alb: bool,
    load_balancer_suffix: pulumi.Input[str],
    target_group_suffix: pulumi.Input[str],
    o: pulumi.ResourceOptions,
    topic_arn: pulumi.Input[str] | None = None,
) -> aws.cloudwatch.MetricAlarm:
    """ALARM when the target group has no healthy replica for 3 minutes (no data counts as none); it pages through
    the region's alert topic (`topic_arn`) as well. A Route 53
    health check of type CLOUDWATCH_METRIC follows it: Route 53's own checkers are outside the VPC and
    cannot reach an internal load balancer (Route 53 API reference, CreateHealthCheck, "Private Hosted
    Zones"; HealthCheckConfig AlarmIdentifier). The dimensions are the ARN suffixes (`app/<name>/<id>`,
    `targetgroup/<name>/<id>`): HealthyHostCount is published per target group and load balancer (ELB user
    guides, CloudWatch metrics, dimensions)."""
    return aws.cloudwatch.MetricAlarm(
        f"{name}-no-healthy-replica",
        alarm_description="no healthy replica behind the regional load balancer (drives Route 53 failover)",
        namespace="AWS/ApplicationELB" if alb else "AWS/NetworkELB",
        metric_name="HealthyHostCount",
        dimensions={"TargetGroup": target_group_suffix, "LoadBalancer": load_balancer_suffix},
        statistic="Minimum",
        period=60,
        evaluation_periods=3,
        datapoints_to_alarm=3,
        threshold=1,
        comparison_operator="LessThanThreshold",
        treat_missing_data="breaching",
        opts=o,
        **notify(topic_arn),
    )


def target_group(name: str, args: EndpointArgs, o: pulumi.ResourceOptions) -> aws.lb.TargetGroup:
    """The replicas behind the load balancer: health checked on the server's health path, drained for the longest
    generation in flight, least outstanding requests on an ALB."""
    alb = args.kind == "alb"
    return aws.lb.TargetGroup(
        f"{name}-tg",
        vpc_id=args.vpc_id,
        port=args.server_port,
        protocol="HTTP" if alb else "TCP",
        target_type="instance",
        # In-flight generations finish before a leaving replica is cut (scale-in, refresh, drain hook).
        deregistration_delay=args.deregistration_seconds,
        # Cold starts are absorbed by the group's health-check grace period; once serving, a replica
        # leaves rotation after `unhealthy_threshold` failed checks.
        health_check=aws.lb.TargetGroupHealthCheckArgs(
            enabled=True,
            protocol="HTTP",
            path=args.health_check_path,
            matcher="200" if alb else None,
            port="traffic-port",
            healthy_threshold=args.healthy_threshold,
            unhealthy_threshold=args.unhealthy_threshold,
            interval=args.interval_seconds,
            timeout=min(10, args.interval_seconds - 1),
        ),
        load_balancing_algorithm_type="least_outstanding_requests" if alb else None,
        opts=o,
    )


def https_listener(
    name: str,
    args: EndpointArgs,
    load_balancer: aws.lb.LoadBalancer,
    targets: aws.lb.TargetGroup,
    o: pulumi.ResourceOptions,
) -> aws.lb.Listener:
    """HTTPS on 443 (TLS on an NLB, which forwards everything). An ALB forwards the OpenAI API and the health path
    only; anything else gets a 404 from the load balancer."""
    alb = args.kind == "alb"
    forward = [aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=targets.arn)]
    not_found = [
        aws.lb.ListenerDefaultActionArgs(
            type="fixed-response",
            fixed_response=aws.lb.ListenerDefaultActionFixedResponseArgs(
                content_type="text/plain", message_body="not found", status_code="404"
            ),
        )
    ]
    listener = aws.lb.Listener(
        f"{name}-https",
        load_balancer_arn=load_balancer.arn,
        port=443,
        protocol="HTTPS" if alb else "TLS",
        ssl_policy=TLS_POLICY,
        certificate_arn=args.certificate_arn,
        default_actions=not_found if alb else forward,
        opts=o,
    )
    if alb:
        aws.lb.ListenerRule(
            f"{name}-api",
            listener_arn=listener.arn,
            priority=10,
            conditions=[
                aws.lb.ListenerRuleConditionArgs(
                    path_pattern=aws.lb.ListenerRuleConditionPathPatternArgs(values=["/v1/*", args.health_check_path])
                )
            ],
            actions=[aws.lb.ListenerRuleActionArgs(type="forward", target_group_arn=targets.arn)],
            opts=o,
        )
    return listener


def http_redirect(name: str, load_balancer: aws.lb.LoadBalancer, o: pulumi.ResourceOptions) -> aws.lb.Listener:
    """An ALB's HTTP listener: a permanent redirect to HTTPS."""
    return aws.lb.Listener(
        f"{name}-http",
        load_balancer_arn=load_balancer.arn,
        port=80,
        protocol="HTTP",
        default_actions=[
            aws.lb.ListenerDefaultActionArgs(
                type="redirect",
                redirect=aws.lb.ListenerDefaultActionRedirectArgs(port="443", protocol="HTTPS", status_code="HTTP_301"),
            )
        ],
        opts=o,
    )


def web_acl(
    name: str, waf: Waf, load_balancer: aws.lb.LoadBalancer, args: EndpointArgs, o: pulumi.ResourceOptions
) -> None:
    """The web ACL (rate limits, managed rule groups), its association with the ALB, and its logging."""
    acl = aws.wafv2.WebAcl(
        f"{name}-waf",
        scope="REGIONAL",
        description="Rate limit per client IP and AWS managed rules in front of the model API",
        default_action=aws.wafv2.WebAclDefaultActionArgs(allow=aws.wafv2.WebAclDefaultActionAllowArgs()),
        rules=web_acl_rules(waf),
        visibility_config=_visibility(f"{name}-waf"),
        tags=args.tags,
        opts=o,
    )
    aws.wafv2.WebAclAssociation(f"{name}-waf-association", resource_arn=load_balancer.arn, web_acl_arn=acl.arn, opts=o)
    waf_logging(name, acl, o, args.log_retention_days)


class RegionalEndpoint(pulumi.ComponentResource):
    load_balancer: aws.lb.LoadBalancer
    target_group: aws.lb.TargetGroup
    health_alarm: aws.cloudwatch.MetricAlarm | None

    def __init__(
        self,
        name: str,
        args: EndpointArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        alb = args.kind == "alb"
        log_bucket, log_policy = access_log_bucket(
            name, args.log_bucket, args.account_id, args.region, alb, o, args.log_retention_days
        )
        self.load_balancer = aws.lb.LoadBalancer(
            f"{name}-lb",
            load_balancer_type="application" if alb else "network",
            internal=args.internal,
            subnets=list(args.public_subnet_ids),
            security_groups=[args.security_group_id],
            drop_invalid_header_fields=True if alb else None,
            idle_timeout=300 if alb else None,  # long generations stream for minutes
            access_logs=aws.lb.LoadBalancerAccessLogsArgs(bucket=log_bucket.id, prefix=PREFIX, enabled=True),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[log_policy])),
        )
        self.target_group = target_group(name, args, o)
        self.https_listener = https_listener(name, args, self.load_balancer, self.target_group, o)
        if alb and args.waf is not None:
            web_acl(name, args.waf, self.load_balancer, args, o)
        if alb:
            http_redirect(name, self.load_balancer, o)
        self.health_alarm = (
            healthy_hosts_alarm(
                name, alb, self.load_balancer.arn_suffix, self.target_group.arn_suffix, o, args.alarm_topic_arn
            )
            if args.internal
            else None
        )
        self.register_outputs({"dns_name": self.load_balancer.dns_name, "target_group_arn": self.target_group.arn})


__all__ = [
    "BODY_RULES",
    "BODY_SIZE_RULE",
    "COMMON_RULE_SET",
    "TLS_POLICY",
    "TYPE",
    "EndpointArgs",
    "RegionalEndpoint",
    "healthy_hosts_alarm",
    "http_redirect",
    "https_listener",
    "log_bucket_name",
    "target_group",
    "web_acl",
    "web_acl_rules",
]
