"""Deterministic stand-ins for what providers return after a create: ids, ARNs, DNS names, autonamed names.

Only the outputs the program reads back are faked (per type below), so the recorded inputs stay exactly what
the program asked for. Nothing here talks to a cloud.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks

from gpuinfra.graph import tokens


def short_hash(*parts: str, length: int = 8) -> str:
    """Stable across runs and processes (unlike hash())."""
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:length]


# Output properties the program reads back, per resource type (besides id and arn).
_ARN_SERVICE = {
    tokens.BUCKET: "s3",
    tokens.IAM_ROLE: "iam",
    tokens.IAM_INSTANCE_PROFILE: "iam",
}


SSM_GET_PARAMETER = "aws:ssm/getParameter:getParameter"
"""A pinned image read from its SSM parameter version: a stand-in AMI id, stable per name and version."""


EC2_GET_AMI = "aws:ec2/getAmi:getAmi"
"""The pinned image's description. A stand-in: the root device of the PCS sample AMIs (Amazon Linux 2 and 2023 boot
from /dev/xvda); `pulumi preview` with the CLI reads the real one from DescribeImages."""


LB_GET_LOAD_BALANCER = "aws:lb/getLoadBalancer:getLoadBalancer"
LB_GET_TARGET_GROUP = "aws:lb/getTargetGroup:getTargetGroup"
"""A load balancer and target group made outside the stack (the AWS Load Balancer Controller's, for a Kubernetes
Service), read back at deploy: stand-in ARNs, suffixes and DNS names, stable per name or tags."""


class AwsMocks(pulumi_mocks.Mocks):
    """Deterministic stand-ins for what providers would return: ids, ARNs, autonamed names."""

    def __init__(self) -> None:
        self._providers: dict[str, tuple[str, str]] = {}
        self.after_apply: dict[str, str] = {}
        """Every stand-in handed out -> what it stands for (Graph.after_apply)."""

    def call(self, args: pulumi_mocks.MockCallArgs) -> Any:
        if args.token == SSM_GET_PARAMETER:
            name = str(dict(args.args).get("name", ""))
            value = f"ami-0{short_hash(name, length=16)}"
            self.after_apply[value] = f"(read at deploy from SSM {name})"
            return {"name": name, "type": "String", "value": value}
        if args.token == EC2_GET_AMI:
            filters = dict(args.args).get("filters") or [{}]
            image = (filters[0].get("values") or ["ami-unknown"])[0]
            return {"id": image, "imageId": image, "rootDeviceName": "/dev/xvda", "rootDeviceType": "ebs"}
        if args.token in (LB_GET_LOAD_BALANCER, LB_GET_TARGET_GROUP):
            return self._load_balancer_read(args)
        return {}

    def _load_balancer_read(self, args: pulumi_mocks.MockCallArgs) -> dict[str, Any]:
        region, account = self._provider_context(args.provider)
        query = dict(args.args)
        key = str(query.get("name") or sorted(dict(query.get("tags") or {}).items()))
        digest = short_hash(args.token, region, key, length=16)
        elb = f"arn:aws:elasticloadbalancing:{region}:{account}"
        if args.token == LB_GET_LOAD_BALANCER:
            name = str(query.get("name"))
            found = {
                "arnSuffix": f"net/{name}/{digest}",
                "dnsName": f"{name}-{digest[:10]}.elb.{region}.amazonaws.com",
                "zoneId": f"Z{digest[:12].upper()}",
                "vpcId": f"vpc-0{digest[:16]}",
            }
            found["arn"] = f"{elb}:loadbalancer/{found['arnSuffix']}"
        else:
            found = {"arnSuffix": f"targetgroup/k8s-{digest[:18]}/{digest}"}
            found["arn"] = f"{elb}:{found['arnSuffix']}"
        source = f"(read at deploy: {args.token.rsplit(':', 1)[-1]} {key})"
        self.after_apply.update((value, source) for value in found.values())
        return {**query, **found, "id": found["arn"]}

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        digest = short_hash(typ, name, length=17)
        if typ.startswith("pulumi:providers:"):
            account = json.loads(inputs.get("allowedAccountIds", '["000000000000"]') or "[]") or ["000000000000"]
            self._providers[f"{pulumi.get_stack()}::{name}"] = (inputs.get("region", "us-east-1"), account[0])
            return f"{name}-{digest[:8]}", inputs
        region, account = self._provider_context(args.provider)
        physical = f"{name}-{digest[:7]}"
        state = dict(inputs)
        state.setdefault("name", physical)
        module = typ.split(":")[1].split("/")[0] if ":" in typ else "x"
        resource_id = _resource_id(typ, physical, digest)
        if typ == tokens.BUCKET:
            bucket = state.setdefault("bucket", physical)
            state.setdefault("arn", f"arn:aws:s3:::{bucket}")
            resource_id = bucket
        elif typ == tokens.LUSTRE:
            state.setdefault("dnsName", f"{resource_id}.fsx.{region}.amazonaws.com")
            state.setdefault("mountName", digest[:8])
        elif typ == tokens.EFS_FILE_SYSTEM:
            # file-system-id.efs.aws-region.amazonaws.com (Amazon EFS User Guide, "Mounting with a DNS name").
            state.setdefault("dnsName", f"{resource_id}.efs.{region}.amazonaws.com")
        elif typ == tokens.LOAD_BALANCER:
            state.setdefault("dnsName", f"{physical}-{digest[:10]}.{region}.elb.amazonaws.com")
            state.setdefault("zoneId", "Z35SXDOTRQ7X7K")
            state.setdefault("arnSuffix", f"app/{physical}/{digest[:16]}")
        elif typ == tokens.TARGET_GROUP:
            state.setdefault("arnSuffix", f"targetgroup/{physical}/{digest[:16]}")
        elif typ == tokens.ROUTE53_ZONE:
            # Route 53 hosted zone ids: "Z" and upper-case letters and digits (the provider's zone_id output).
            state.setdefault("zoneId", f"Z{digest[:14].upper()}")
        elif typ == tokens.GA_ACCELERATOR:
            state.setdefault("dnsName", f"{digest[:16]}.awsglobalaccelerator.com")
        elif typ == tokens.LAUNCH_TEMPLATE:
            # Every change of a template is a new version, and a group pinned to its latest version rolls
            # (instance refresh): the stand-in version follows the template's content, so a diff of two
            # previews shows that roll on every group that pins it.
            version = 1 + int(short_hash(json.dumps(inputs, sort_keys=True, default=str), length=8), 16) % 999_999
            state.setdefault("latestVersion", version)
            self.after_apply[str(version)] = "(the template's version after apply: a new one when the template changes)"
        elif typ == tokens.IAM_INSTANCE_PROFILE:
            path = state.get("path") or "/"
            state.setdefault("arn", f"arn:aws:iam::{account}:instance-profile{path}{physical}")
        elif typ.startswith("aws-native:"):
            state.setdefault("awsId", f"pcs_{digest[:10]}")
        elif typ == tokens.KMS_KEY:
            state.setdefault("keyId", resource_id)
        elif typ == tokens.LOG_GROUP:
            # A log group ARN (arn:aws:logs:region:account:log-group:name); the flow log role adds ":*" for streams.
            state.setdefault("arn", f"arn:aws:logs:{region}:{account}:log-group:{state['name']}")
        elif typ == tokens.K8S_SERVICE and (state.get("spec") or {}).get("type") == "LoadBalancer":
            state.setdefault(
                "status", {"loadBalancer": {"ingress": [{"hostname": f"{digest[:24]}.elb.amazonaws.com"}]}}
            )
        elif typ == tokens.EKS_CLUSTER:
            state.setdefault("endpoint", f"https://{digest[:16].upper()}.gr7.{region}.eks.amazonaws.com")
            state.setdefault("certificateAuthority", {"data": "LS0tLS1CRUdJTi0tLS0t"})
            vpc_config = dict(state.get("vpcConfig") or {})
            vpc_config.setdefault("clusterSecurityGroupId", f"sg-0{digest[:16]}")
            state["vpcConfig"] = vpc_config
        service = _ARN_SERVICE.get(typ, module)
        arn_region = "" if service in ("iam", "s3") else region  # global services have no region in ARNs
        state.setdefault(
            "arn", f"arn:aws:{service}:{arn_region}:{account}:{typ.rsplit(':', 1)[-1].lower()}/{resource_id}"
        )
        given = {v for v in inputs.values() if isinstance(v, str)}  # an id equal to a given name is known
        given |= _derived_from_given(typ, inputs, state)
        self.after_apply.update(
            (value, f"{name}-<random> (autonamed at apply)" if key == "name" else "(known after apply)")
            for key, value in [("id", resource_id), *state.items()]
            if isinstance(value, str) and key not in inputs and value and value not in given
        )
        return resource_id, state

    def _provider_context(self, provider_ref: str | None) -> tuple[str, str]:
        if provider_ref:
            urn = provider_ref.rsplit("::", 1)[0]
            key = f"{pulumi.get_stack()}::{urn.rsplit('::', 1)[-1]}"
            if key in self._providers:
                return self._providers[key]
        return "us-east-1", "000000000000"


def _derived_from_given(typ: str, inputs: dict[str, Any], state: dict[str, Any]) -> set[str]:
    """ARNs AWS builds from a name the program gives (and the provider's known account and region), so a policy
    naming them says something true before apply: a bucket's arn:aws:s3:::<bucket> (Amazon S3 User Guide, "Policy
    resources for Amazon S3"), a log group's arn:aws:logs:<region>:<account>:log-group:<name> (CloudWatch Logs
    API Reference, LogGroup.arn)."""
    if typ == tokens.BUCKET and inputs.get("bucket"):
        return {str(state["arn"])}
    if typ == tokens.LOG_GROUP and inputs.get("name"):
        return {str(state["arn"])}
    return set()


_ID_PREFIX = {
    "vpc": "vpc",
    "subnet": "subnet",
    "securityGroup": "sg",
    "launchTemplate": "lt",
    "internetGateway": "igw",
    "natGateway": "nat",
    "eip": "eipalloc",
    "routeTable": "rtb",
    "vpcEndpoint": "vpce",
    "lustreFileSystem": "fs",
    "fileSystem": "fs",
    "mountTarget": "fsmt",
    "instance": "i",
    "placementGroup": "pg",
    "key": "key",
    "dataRepositoryAssociation": "dra",
}


def _resource_id(typ: str, physical: str, digest: str) -> str:
    kind = typ.rsplit(":", 1)[-1]
    kind = kind[0].lower() + kind[1:]
    prefix = _ID_PREFIX.get(kind)
    return f"{prefix}-0{digest[:16]}" if prefix else physical


__all__ = ["AwsMocks", "short_hash"]
