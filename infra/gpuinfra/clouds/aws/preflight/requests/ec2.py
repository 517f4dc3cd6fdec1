"""EC2 resources -> EC2 API requests, following terraform-provider-aws internal/service/ec2
(`expandRequestLaunchTemplateData`, `expandIPPerms`, `resourceInstanceCreate`, ...)."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, bool_str, tag_list, without
from gpuinfra.graph import Resource

EC2 = "ec2"
TAGS = {"tags": DROP, "tagsAll": DROP}


def _tag_specs(resource_type: str, tags: Any) -> list[dict[str, Any]] | None:
    if not isinstance(tags, dict) or not tags:
        return None
    return [{"ResourceType": resource_type, "Tags": tag_list()(tags)}]


EBS = F(
    fields={
        "deleteOnTermination": F(convert=bool_str),
        "encrypted": F(convert=bool_str),
    }
)
NETWORK_INTERFACE = F(
    fields={
        "associateCarrierIpAddress": F(convert=bool_str),
        "associatePublicIpAddress": F(convert=bool_str),
        "deleteOnTermination": F(convert=bool_str),
        "securityGroups": "Groups",
        "ipv4AddressCount": "SecondaryPrivateIpAddressCount",
        "ipv4Addresses": F("PrivateIpAddresses", lambda v: [{"PrivateIpAddress": a} for a in v]),
        "ipv6Addresses": F(convert=lambda v: [{"Ipv6Address": a} for a in v]),
        "ipv4Prefixes": F(convert=lambda v: [{"Ipv4Prefix": a} for a in v]),
        "ipv6Prefixes": F(convert=lambda v: [{"Ipv6Prefix": a} for a in v]),
    }
)
LAUNCH_TEMPLATE_DATA = {
    "blockDeviceMappings": F(fields={"ebs": EBS}),
    "ebsOptimized": F(convert=bool_str),
    "networkInterfaces": NETWORK_INTERFACE,
    "securityGroupNames": "SecurityGroups",
    "vpcSecurityGroupIds": "SecurityGroupIds",
    "ramDiskId": "RamDiskId",
    "tagSpecifications": F(fields={"tags": F(convert=tag_list())}),
    "elasticGpuSpecifications": "ElasticGpuSpecifications",
}


def launch_template(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(EC2, "CreateLaunchTemplate")
    call.put("LaunchTemplateName", i.get("name", AUTONAME), "name")
    call.put("VersionDescription", i.get("description"), "description")
    call.put("TagSpecifications", _tag_specs("launch-template", i.get("tags")), "tags")
    data = without(i, "name", "namePrefix", "description", "tags", "tagsAll", "updateDefaultVersion", "defaultVersion")
    return [call.fill(data, LAUNCH_TEMPLATE_DATA, into="LaunchTemplateData")]


def instance(r: Resource) -> list[Call]:
    """RunInstances as resourceInstanceCreate builds it; the root block device's name comes from the AMI."""
    i = r.inputs
    call = Call(EC2, "RunInstances").put("MinCount", 1).put("MaxCount", 1)
    call.put("ImageId", i.get("ami"), "ami")
    if "iamInstanceProfile" in i:
        call.put("IamInstanceProfile", {"Name": i["iamInstanceProfile"]}, "iamInstanceProfile")
    if "rootBlockDevice" in i:
        ebs = call.mapped(i["rootBlockDevice"], ".BlockDeviceMappings[0].Ebs", TAGS, at="rootBlockDevice")
        call.params["BlockDeviceMappings"] = [{"DeviceName": AUTONAME, "Ebs": ebs}]
    call.put("TagSpecifications", _tag_specs("instance", i.get("tags")), "tags")
    spec = {
        "ami": DROP,
        "iamInstanceProfile": DROP,
        "rootBlockDevice": DROP,
        "associatePublicIpAddress": DROP,  # sent on the primary network interface
        "vpcSecurityGroupIds": "SecurityGroupIds",
        "securityGroups": "SecurityGroups",
        "privateIp": "PrivateIpAddress",
        "monitoring": F(convert=lambda v: {"Enabled": v}),
        "sourceDestCheck": DROP,  # ModifyInstanceAttribute after launch
        "userDataReplaceOnChange": DROP,
        "userDataBase64": "UserData",
        "availabilityZone": F("Placement", lambda v: {"AvailabilityZone": v}),
        "placementGroup": F("Placement", lambda v: {"GroupName": v}),
        "tenancy": F("Placement", lambda v: {"Tenancy": v}),
        **TAGS,
        "volumeTags": DROP,
    }
    return [call.fill(i, spec)]


def placement_group(r: Resource) -> list[Call]:
    call = Call(EC2, "CreatePlacementGroup").put("GroupName", r.inputs.get("name", AUTONAME), "name")
    call.put("TagSpecifications", _tag_specs("placement-group", r.inputs.get("tags")), "tags")
    return [call.fill(without(r.inputs, "name", "namePrefix"), TAGS)]


def vpc(r: Resource) -> list[Call]:
    i = r.inputs
    calls = [
        Call(EC2, "CreateVpc").fill(
            i,
            {
                **TAGS,
                "enableDnsSupport": DROP,
                "enableDnsHostnames": DROP,
                "enableNetworkAddressUsageMetrics": DROP,
                "assignGeneratedIpv6CidrBlock": "AmazonProvidedIpv6CidrBlock",
                "ipv4NetmaskLength": "Ipv4NetmaskLength",
            },
        )
    ]
    # ModifyVpcAttribute takes one attribute per call (EC2 API reference, ModifyVpcAttribute).
    for key, member in (
        ("enableDnsSupport", "EnableDnsSupport"),
        ("enableDnsHostnames", "EnableDnsHostnames"),
        ("enableNetworkAddressUsageMetrics", "EnableNetworkAddressUsageMetrics"),
    ):
        if key in i:
            call = Call(EC2, "ModifyVpcAttribute").put("VpcId", AUTONAME)
            calls.append(call.put(member, {"Value": i[key]}, key))
    return calls


def subnet(r: Resource) -> list[Call]:
    i = r.inputs
    calls = [
        Call(EC2, "CreateSubnet").fill(i, {**TAGS, "mapPublicIpOnLaunch": DROP, "assignIpv6AddressOnCreation": DROP})
    ]
    if "mapPublicIpOnLaunch" in i:
        call = Call(EC2, "ModifySubnetAttribute").put("SubnetId", AUTONAME)
        calls.append(call.put("MapPublicIpOnLaunch", {"Value": i["mapPublicIpOnLaunch"]}, "mapPublicIpOnLaunch"))
    return calls


def _permission(rule: dict[str, Any], at: str) -> dict[str, Any]:
    """expandIPPerm: one IpPermission per rule block; `self` and `securityGroups` become group pairs, the
    rule's description is carried on each range and pair."""
    description = rule.get("description")
    with_description = {"Description": description} if description else {}
    perm: dict[str, Any] = {
        "IpProtocol": rule.get("protocol"),
        "FromPort": rule.get("fromPort"),
        "ToPort": rule.get("toPort"),
    }
    if rule.get("cidrBlocks"):
        perm["IpRanges"] = [{"CidrIp": c, **with_description} for c in rule["cidrBlocks"]]
    if rule.get("ipv6CidrBlocks"):
        perm["Ipv6Ranges"] = [{"CidrIpv6": c, **with_description} for c in rule["ipv6CidrBlocks"]]
    if rule.get("prefixListIds"):
        perm["PrefixListIds"] = [{"PrefixListId": p, **with_description} for p in rule["prefixListIds"]]
    groups = list(rule.get("securityGroups") or []) + ([AUTONAME] if rule.get("self") else [])
    if groups:
        perm["UserIdGroupPairs"] = [{"GroupId": g, **with_description} for g in groups]
    return perm


def security_group(r: Resource) -> list[Call]:
    i = r.inputs
    create = Call(EC2, "CreateSecurityGroup").put("GroupName", i.get("name", AUTONAME), "name")
    # The provider's default description (pulumi-aws: "Managed by Pulumi").
    create.put("Description", i.get("description", "Managed by Pulumi"), "description")
    create.put("VpcId", i.get("vpcId"), "vpcId")
    create.put("TagSpecifications", _tag_specs("security-group", i.get("tags")), "tags")
    create.gaps.extend(
        k
        for k in i
        if k
        not in {
            "name",
            "namePrefix",
            "description",
            "vpcId",
            "tags",
            "tagsAll",
            "ingress",
            "egress",
            "revokeRulesOnDelete",
        }
    )
    return [create, *_rule_calls(i)]


def default_security_group(r: Resource) -> list[Call]:
    """aws_default_security_group adopts the VPC's default group (terraform-provider-aws
    ec2/vpc_default_security_group.go: DescribeSecurityGroups by vpc-id and group-name "default"), revokes the rules
    it finds, authorizes the ones given (none, in gpuinfra: a closed group) and tags it with CreateTags."""
    i = r.inputs
    find = Call(EC2, "DescribeSecurityGroups").put(
        "Filters",
        [{"Name": "vpc-id", "Values": [i.get("vpcId")]}, {"Name": "group-name", "Values": ["default"]}],
    )
    find.paths[".Filters[0].Values[0]"] = "vpcId"
    find.gaps.extend(k for k in i if k not in {"vpcId", "tags", "tagsAll", "ingress", "egress", "revokeRulesOnDelete"})
    calls = [find, *_rule_calls(i)]
    if isinstance(i.get("tags"), dict) and i["tags"]:
        calls.append(Call(EC2, "CreateTags").put("Resources", [AUTONAME]).put("Tags", tag_list()(i["tags"]), "tags"))
    return calls


def _rule_calls(i: dict[str, Any]) -> list[Call]:
    """AuthorizeSecurityGroupIngress/Egress for a group's inline rules (terraform-provider-aws expandIPPerms)."""
    calls = []
    for key, op in (("ingress", "AuthorizeSecurityGroupIngress"), ("egress", "AuthorizeSecurityGroupEgress")):
        rules = i.get(key) or []
        if not rules:
            continue
        call = Call(EC2, op).put("GroupId", AUTONAME)
        call.put("IpPermissions", [_permission(rule, f"{key}[{n}]") for n, rule in enumerate(rules)], key)
        for n, rule in enumerate(rules):
            call.paths[f".IpPermissions[{n}]"] = f"{key}[{n}]"
            for member, name in (("IpProtocol", "protocol"), ("FromPort", "fromPort"), ("ToPort", "toPort")):
                call.paths[f".IpPermissions[{n}].{member}"] = f"{key}[{n}].{name}"
            call.gaps.extend(
                f"{key}[{n}].{k}"
                for k in rule
                if k
                not in {
                    "protocol",
                    "fromPort",
                    "toPort",
                    "cidrBlocks",
                    "ipv6CidrBlocks",
                    "prefixListIds",
                    "securityGroups",
                    "self",
                    "description",
                }
            )
        calls.append(call)

    return calls


def internet_gateway(r: Resource) -> list[Call]:
    create = Call(EC2, "CreateInternetGateway").put(
        "TagSpecifications", _tag_specs("internet-gateway", r.inputs.get("tags"))
    )
    attach = (
        Call(EC2, "AttachInternetGateway")
        .put("InternetGatewayId", AUTONAME)
        .put("VpcId", r.inputs.get("vpcId"), "vpcId")
    )
    create.gaps.extend(k for k in r.inputs if k not in {"vpcId", "tags", "tagsAll"})
    return [create, attach] if "vpcId" in r.inputs else [create]


def eip(r: Resource) -> list[Call]:
    spec = {**TAGS, "instance": DROP, "networkInterface": DROP, "associateWithPrivateIp": DROP, "address": "Address"}
    call = Call(EC2, "AllocateAddress").fill(r.inputs, spec)
    return [call.put("TagSpecifications", _tag_specs("elastic-ip", r.inputs.get("tags")), "tags")]


def nat_gateway(r: Resource) -> list[Call]:
    call = Call(EC2, "CreateNatGateway").fill(
        r.inputs, {**TAGS, "secondaryPrivateIpAddressCount": "SecondaryPrivateIpAddressCount"}
    )
    return [call.put("TagSpecifications", _tag_specs("natgateway", r.inputs.get("tags")), "tags")]


ROUTE = {
    "cidrBlock": "DestinationCidrBlock",
    "ipv6CidrBlock": "DestinationIpv6CidrBlock",
    "destinationPrefixListId": "DestinationPrefixListId",
    "egressOnlyGatewayId": "EgressOnlyInternetGatewayId",
}


def route_table(r: Resource) -> list[Call]:
    i = r.inputs
    create = Call(EC2, "CreateRouteTable").put("VpcId", i.get("vpcId"), "vpcId")
    create.put("TagSpecifications", _tag_specs("route-table", i.get("tags")), "tags")
    create.gaps.extend(k for k in i if k not in {"vpcId", "routes", "tags", "tagsAll", "propagatingVgws"})
    calls = [create]
    for n, route in enumerate(i.get("routes") or []):
        call = Call(EC2, "CreateRoute").put("RouteTableId", AUTONAME)
        calls.append(call.fill(route, ROUTE, at=f"routes[{n}]"))
    return calls


def route(r: Resource) -> list[Call]:
    return [Call(EC2, "CreateRoute").fill(r.inputs, {**ROUTE, "destinationCidrBlock": "DestinationCidrBlock"})]


def route_table_association(r: Resource) -> list[Call]:
    return [Call(EC2, "AssociateRouteTable").fill(r.inputs)]


def vpc_endpoint(r: Resource) -> list[Call]:
    spec = {**TAGS, "policy": "PolicyDocument", "autoAccept": DROP}
    call = Call(EC2, "CreateVpcEndpoint").fill(r.inputs, spec)
    return [call.put("TagSpecifications", _tag_specs("vpc-endpoint", r.inputs.get("tags")), "tags")]


def flow_log(r: Resource) -> list[Call]:
    """CreateFlowLogs as terraform-provider-aws ec2/vpc_flow_log.go sends it: the one VPC as ResourceIds with
    ResourceType VPC, the role as DeliverLogsPermissionArn."""
    i = r.inputs
    call = Call(EC2, "CreateFlowLogs").put("ResourceType", "VPC").put("ResourceIds", [i.get("vpcId")], "vpcId")
    spec = {**TAGS, "vpcId": DROP, "iamRoleArn": "DeliverLogsPermissionArn"}
    call.put("TagSpecifications", _tag_specs("vpc-flow-log", i.get("tags")), "tags")
    return [call.fill(i, spec)]


__all__ = [
    "default_security_group",
    "eip",
    "flow_log",
    "instance",
    "internet_gateway",
    "launch_template",
    "nat_gateway",
    "placement_group",
    "route",
    "route_table",
    "route_table_association",
    "security_group",
    "subnet",
    "vpc",
    "vpc_endpoint",
]
