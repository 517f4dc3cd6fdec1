"""Load balancers -> Elastic Load Balancing v2 API requests, following terraform-provider-aws
internal/service/elbv2 (load_balancer.go `resourceLoadBalancerCreate` and its attribute map,
target_group.go, listener.go `expandLbListenerActions`)."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, tag_list
from gpuinfra.graph import Resource

ELB = "elbv2"

# Pulumi input -> load balancer attribute key (load_balancer.go loadBalancerAttributes).
LB_ATTRIBUTES = {
    "idleTimeout": "idle_timeout.timeout_seconds",
    "dropInvalidHeaderFields": "routing.http.drop_invalid_header_fields.enabled",
    "enableDeletionProtection": "deletion_protection.enabled",
    "enableHttp2": "routing.http2.enabled",
    "enableCrossZoneLoadBalancing": "load_balancing.cross_zone.enabled",
    "desyncMitigationMode": "routing.http.desync_mitigation_mode",
    "clientKeepAlive": "client_keep_alive.seconds",
    "preserveHostHeader": "routing.http.preserve_host_header.enabled",
    "xffHeaderProcessingMode": "routing.http.xff_header_processing.mode",
    "enableWafFailOpen": "waf.fail_open.enabled",
    "enableTlsVersionAndCipherSuiteHeaders": "routing.http.x_amzn_tls_version_and_cipher_suite.enabled",
    "enableXffClientPort": "routing.http.xff_client_port.enabled",
    "enableZonalShift": "zonal_shift.config.enabled",
    "dnsRecordClientRoutingPolicy": "dns_record.client_routing_policy",
}
TG_ATTRIBUTES = {
    "deregistrationDelay": "deregistration_delay.timeout_seconds",
    "loadBalancingAlgorithmType": "load_balancing.algorithm.type",
    "loadBalancingAnomalyMitigation": "load_balancing.algorithm.anomaly_mitigation",
    "loadBalancingCrossZoneEnabled": "load_balancing.cross_zone.enabled",
    "slowStart": "slow_start.duration_seconds",
    "proxyProtocolV2": "proxy_protocol_v2.enabled",
    "preserveClientIp": "preserve_client_ip.enabled",
    "connectionTermination": "deregistration_delay.connection_termination.enabled",
    "lambdaMultiValueHeadersEnabled": "lambda.multi_value_headers.enabled",
}


def _text(value: Any) -> Any:
    """Attribute values are strings in the API ("true", "300")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


def _attributes(r: Resource, keys: dict[str, str], op: str, arn_member: str) -> Call | None:
    present = [(k, v) for k, v in keys.items() if k in r.inputs]
    if not present:
        return None
    call = Call(ELB, op).put(arn_member, AUTONAME)
    call.put("Attributes", [{"Key": key, "Value": _text(r.inputs[k])} for k, key in present])
    for n, (k, _) in enumerate(present):
        call.paths[f".Attributes[{n}]"] = k
    return call


def load_balancer(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(ELB, "CreateLoadBalancer").put("Name", i.get("name", AUTONAME), "name")
    if "internal" in i:
        call.put("Scheme", "internal" if i["internal"] else "internet-facing", "internal")
    spec: dict[str, Any] = {
        **{k: DROP for k in LB_ATTRIBUTES},
        "name": DROP,
        "namePrefix": DROP,
        "internal": DROP,
        "loadBalancerType": "Type",
        "subnetMappings": F(fields={"allocationId": "AllocationId", "ipv6Address": "IPv6Address"}),
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
        "accessLogs": DROP,
        "connectionLogs": DROP,
        "enforceSecurityGroupInboundRulesOnPrivateLinkTraffic": DROP,
    }
    calls = [call.fill(i, spec)]
    attributes = _attributes(r, LB_ATTRIBUTES, "ModifyLoadBalancerAttributes", "LoadBalancerArn")
    return calls + ([attributes] if attributes else [])


def target_group(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(ELB, "CreateTargetGroup").put("Name", i.get("name", AUTONAME), "name")
    health = dict(i.get("healthCheck") or {})
    health_members = {
        "enabled": "HealthCheckEnabled",
        "path": "HealthCheckPath",
        "port": "HealthCheckPort",
        "protocol": "HealthCheckProtocol",
        "interval": "HealthCheckIntervalSeconds",
        "timeout": "HealthCheckTimeoutSeconds",
        "healthyThreshold": "HealthyThresholdCount",
        "unhealthyThreshold": "UnhealthyThresholdCount",
    }
    for key, member in health_members.items():
        if key in health:
            call.put(member, health.pop(key), f"healthCheck.{key}")
    if "matcher" in health:
        # target_group.go: gRPC target groups take a GrpcCode, the others an HttpCode.
        code = "GrpcCode" if i.get("protocolVersion") == "GRPC" else "HttpCode"
        call.put("Matcher", {code: health.pop("matcher")}, "healthCheck.matcher")
    call.gaps.extend(f"healthCheck.{k}" for k in health)
    spec: dict[str, Any] = {
        **{k: DROP for k in TG_ATTRIBUTES},
        "name": DROP,
        "namePrefix": DROP,
        "healthCheck": DROP,
        "stickiness": DROP,
        "targetFailovers": DROP,
        "targetHealthStates": DROP,
        "targetGroupHealth": DROP,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
    }
    calls = [call.fill(i, spec)]
    attributes = _attributes(r, TG_ATTRIBUTES, "ModifyTargetGroupAttributes", "TargetGroupArn")
    return calls + ([attributes] if attributes else [])


ACTION = F(
    fields={
        "redirect": F("RedirectConfig"),
        "fixedResponse": F("FixedResponseConfig"),
        "forward": F(
            "ForwardConfig",
            fields={
                "targetGroups": F(fields={"arn": "TargetGroupArn"}),
                "stickiness": F("TargetGroupStickinessConfig", fields={"duration": "DurationSeconds"}),
            },
        ),
        "authenticateOidc": F("AuthenticateOidcConfig"),
        "authenticateCognito": F("AuthenticateCognitoConfig"),
    }
)


def listener(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(ELB, "CreateListener")
    if "certificateArn" in i:
        call.put("Certificates", [{"CertificateArn": i["certificateArn"]}], "certificateArn")
    if "alpnPolicy" in i:
        call.put("AlpnPolicy", [i["alpnPolicy"]], "alpnPolicy")
    spec = {
        "certificateArn": DROP,
        "alpnPolicy": DROP,
        "defaultActions": ACTION,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
        "tcpIdleTimeoutSeconds": DROP,
    }
    return [call.fill(i, spec)]


CONDITION_FIELDS = {
    "pathPattern": ("path-pattern", "PathPatternConfig"),
    "hostHeader": ("host-header", "HostHeaderConfig"),
    "httpRequestMethod": ("http-request-method", "HttpRequestMethodConfig"),
    "sourceIp": ("source-ip", "SourceIpConfig"),
}
"""listener_rule.go expandLbListenerRuleConditions: each condition block names its field and config."""


def rule_conditions(conditions: Any) -> Any:
    if not isinstance(conditions, list):
        return conditions
    out = []
    for condition in conditions:
        if not isinstance(condition, dict):
            out.append(condition)
            continue
        for key, (field_name, config) in CONDITION_FIELDS.items():
            block = condition.get(key)
            if isinstance(block, dict):
                out.append({"Field": field_name, config: {"Values": block.get("values")}})
    return out


def listener_rule(r: Resource) -> list[Call]:
    spec = {
        "actions": ACTION,
        "conditions": F(convert=rule_conditions),
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
    }
    return [Call(ELB, "CreateRule").fill(r.inputs, spec)]


__all__ = ["LB_ATTRIBUTES", "TG_ATTRIBUTES", "listener", "listener_rule", "load_balancer", "target_group"]
