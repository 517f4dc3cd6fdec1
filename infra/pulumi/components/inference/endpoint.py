"""A region's entry point: an ALB with an HTTPS listener and an HTTP->HTTPS redirect (or an NLB with a
TLS listener), and the target group whose health check is the server's health path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.pulumi.components.base import child

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


class RegionalEndpoint(pulumi.ComponentResource):
    load_balancer: aws.lb.LoadBalancer
    target_group: aws.lb.TargetGroup

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
        self.load_balancer = aws.lb.LoadBalancer(
            f"{name}-lb",
            load_balancer_type="application" if alb else "network",
            internal=False,
            subnets=list(args.public_subnet_ids),
            security_groups=[args.security_group_id],
            drop_invalid_header_fields=True if alb else None,
            idle_timeout=300 if alb else None,  # long generations stream for minutes
            opts=o,
        )
        self.target_group = aws.lb.TargetGroup(
            f"{name}-tg",
            vpc_id=args.vpc_id,
            port=args.server_port,
            protocol="HTTP" if alb else "TCP",
            target_type="instance",
            deregistration_delay=60,
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
        forward = [aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=self.target_group.arn)]
        self.https_listener = aws.lb.Listener(
            f"{name}-https",
            load_balancer_arn=self.load_balancer.arn,
            port=443,
            protocol="HTTPS" if alb else "TLS",
            ssl_policy=TLS_POLICY,
            certificate_arn=args.certificate_arn,
            default_actions=forward,
            opts=o,
        )
        if alb:
            aws.lb.Listener(
                f"{name}-http",
                load_balancer_arn=self.load_balancer.arn,
                port=80,
                protocol="HTTP",
                default_actions=[
                    aws.lb.ListenerDefaultActionArgs(
                        type="redirect",
                        redirect=aws.lb.ListenerDefaultActionRedirectArgs(
                            port="443", protocol="HTTPS", status_code="HTTP_301"
                        ),
                    )
                ],
                opts=o,
            )
        self.register_outputs({"dns_name": self.load_balancer.dns_name, "target_group_arn": self.target_group.arn})


__all__ = ["TLS_POLICY", "TYPE", "EndpointArgs", "RegionalEndpoint"]
