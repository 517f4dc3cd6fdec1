"""DNS and global routing -> Route 53 and Global Accelerator API requests, following terraform-provider-aws
internal/service/route53 (record.go `expandResourceRecordSet`, health_check.go) and
internal/service/globalaccelerator (accelerator.go, listener.go, endpoint_group.go)."""

from __future__ import annotations

import re
from typing import Any

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, tag_list
from gpuinfra.graph import Resource


def record(r: Resource) -> list[Call]:
    i = r.inputs
    rrset: dict[str, Any] = {}
    paths: dict[str, str] = {}

    def member(name: str, value: Any, at: str) -> None:
        if value is not None:
            rrset[name] = value
            paths[name] = at

    member("Name", i.get("name"), "name")
    member("Type", i.get("type"), "type")
    member("SetIdentifier", i.get("setIdentifier"), "setIdentifier")
    member("TTL", i.get("ttl"), "ttl")
    member("HealthCheckId", i.get("healthCheckId"), "healthCheckId")
    if i.get("records"):
        member("ResourceRecords", [{"Value": v} for v in i["records"]], "records")
    for n, alias in enumerate(i.get("aliases") or []):
        if n == 0:
            member(
                "AliasTarget",
                {
                    "HostedZoneId": alias.get("zoneId"),
                    "DNSName": alias.get("name"),
                    "EvaluateTargetHealth": alias.get("evaluateTargetHealth"),
                },
                "aliases[0]",
            )
    for n, policy in enumerate(i.get("latencyRoutingPolicies") or []):
        member("Region", policy.get("region"), f"latencyRoutingPolicies[{n}].region")
    for n, policy in enumerate(i.get("weightedRoutingPolicies") or []):
        member("Weight", policy.get("weight"), f"weightedRoutingPolicies[{n}].weight")
    for n, policy in enumerate(i.get("failoverRoutingPolicies") or []):
        member("Failover", policy.get("type"), f"failoverRoutingPolicies[{n}].type")
    for n, policy in enumerate(i.get("geolocationRoutingPolicies") or []):
        geo = {
            "ContinentCode": policy.get("continent"),
            "CountryCode": policy.get("country"),
            "SubdivisionCode": policy.get("subdivision"),
        }
        member("GeoLocation", {k: v for k, v in geo.items() if v is not None}, f"geolocationRoutingPolicies[{n}]")
    if "multivalueAnswerRoutingPolicy" in i:
        member("MultiValueAnswer", i["multivalueAnswerRoutingPolicy"], "multivalueAnswerRoutingPolicy")
    known = {
        "name",
        "type",
        "setIdentifier",
        "ttl",
        "healthCheckId",
        "records",
        "aliases",
        "latencyRoutingPolicies",
        "weightedRoutingPolicies",
        "failoverRoutingPolicies",
        "geolocationRoutingPolicies",
        "multivalueAnswerRoutingPolicy",
        "zoneId",
        "allowOverwrite",
    }
    action = "UPSERT" if i.get("allowOverwrite") else "CREATE"
    call = Call("route53", "ChangeResourceRecordSets").put("HostedZoneId", i.get("zoneId"), "zoneId")
    call.put("ChangeBatch", {"Changes": [{"Action": action, "ResourceRecordSet": rrset}]})
    for name, at in paths.items():
        call.paths[f".ChangeBatch.Changes[0].ResourceRecordSet.{name}"] = at
    call.gaps.extend(k for k in i if k not in known)
    return [call]


HEALTH_CHECK = {
    "fqdn": "FullyQualifiedDomainName",
    "ipAddress": "IPAddress",
    "invertHealthcheck": "Inverted",
    "childHealthThreshold": "HealthThreshold",
    "childHealthchecks": "ChildHealthChecks",
    "enableSni": "EnableSNI",
    "cloudwatchAlarmName": DROP,
    "cloudwatchAlarmRegion": DROP,
    "referenceName": DROP,
    "tags": DROP,
    "tagsAll": DROP,
    "triggers": DROP,
}


def health_check(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call("route53", "CreateHealthCheck").put("CallerReference", AUTONAME)
    call.fill(i, HEALTH_CHECK, into="HealthCheckConfig")
    if "cloudwatchAlarmName" in i:
        alarm = {"Name": i["cloudwatchAlarmName"], "Region": i.get("cloudwatchAlarmRegion")}
        call.params["HealthCheckConfig"]["AlarmIdentifier"] = alarm
    if "referenceName" in i and isinstance(i["referenceName"], str):
        # health_check.go: CallerReference = reference_name + "-" + a unique id, at most 64 characters.
        call.put("CallerReference", f"{i['referenceName']}-{AUTONAME}", "referenceName")
    return [call]


def _vpc(call: Call, vpc: Any, at: str) -> Call:
    call.put("VPC", {"VPCId": vpc.get("vpcId"), "VPCRegion": vpc.get("vpcRegion")}, at)
    call.paths.update({".VPC.VPCId": f"{at}.vpcId", ".VPC.VPCRegion": f"{at}.vpcRegion"})
    return call


def hosted_zone(r: Resource) -> list[Call]:
    """route53/zone.go: CreateHostedZone with the comment and, for a private zone, its first VPC (PrivateZone set),
    then AssociateVPCWithHostedZone for each other VPC; tags go through ChangeTagsForResource (not judged)."""
    i = r.inputs
    vpcs = [v for v in i.get("vpcs") or [] if isinstance(v, dict)]
    config: dict[str, Any] = {"Comment": i.get("comment", "Managed by Pulumi")}
    call = Call("route53", "CreateHostedZone").put("Name", i.get("name"), "name").put("CallerReference", AUTONAME)
    if vpcs:
        config["PrivateZone"] = True
        _vpc(call, vpcs[0], "vpcs[0]")
    call.put("HostedZoneConfig", config, "comment")
    call.paths[".HostedZoneConfig.Comment"] = "comment"
    if "delegationSetId" in i:
        call.put("DelegationSetId", i["delegationSetId"], "delegationSetId")
    known = {
        "name",
        "comment",
        "vpcs",
        "delegationSetId",
        "forceDestroy",
        "tags",
        "tagsAll",
        "enableAcceleratedRecovery",
    }
    call.gaps.extend(k for k in i if k not in known)
    calls = [call]
    for n, vpc in enumerate(vpcs[1:], start=1):
        associate = Call("route53", "AssociateVPCWithHostedZone").put("HostedZoneId", AUTONAME)
        calls.append(_vpc(associate, vpc, f"vpcs[{n}]"))
    return calls


GA = "globalaccelerator"


def accelerator(r: Resource) -> list[Call]:
    i = r.inputs
    spec = {"attributes": DROP, "tags": F(convert=tag_list()), "tagsAll": DROP}
    call = Call(GA, "CreateAccelerator").put("IdempotencyToken", AUTONAME).put("Name", i.get("name", AUTONAME), "name")
    calls = [call.fill(i, {**spec, "name": DROP})]
    if i.get("attributes"):
        call = Call(GA, "UpdateAcceleratorAttributes").put("AcceleratorArn", AUTONAME)
        calls.append(call.fill(i["attributes"], at="attributes"))
    return calls


def ga_listener(r: Resource) -> list[Call]:
    return [Call(GA, "CreateListener").put("IdempotencyToken", AUTONAME).fill(r.inputs)]


def endpoint_group(r: Resource) -> list[Call]:
    spec = {"endpointConfigurations": F(fields={"clientIpPreservationEnabled": "ClientIPPreservationEnabled"})}
    return [Call(GA, "CreateEndpointGroup").put("IdempotencyToken", AUTONAME).fill(r.inputs, spec)]


def region_of_arn(arn: Any) -> str | None:
    match = re.match(r"arn:aws[\w-]*:[\w-]+:([a-z0-9-]*):", arn) if isinstance(arn, str) else None
    return match.group(1) if match else None


__all__ = ["accelerator", "endpoint_group", "ga_listener", "health_check", "hosted_zone", "record", "region_of_arn"]
