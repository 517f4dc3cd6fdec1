"""One AWS resource judged by its provider's own definition: a pulumi-aws type by the botocore model of the
requests its creation sends (the table's translation), a pulumi-aws-native type by its CloudFormation schema."""

from __future__ import annotations

import gpuinfra.clouds.aws.preflight.cloudformation as cloudformation
from gpuinfra.clouds.aws.preflight.botocore_check import validate
from gpuinfra.clouds.aws.preflight.rules import RULES
from gpuinfra.clouds.aws.preflight.table import AWS, CLOUDFORMATION_PREFIX, AwsApi
from gpuinfra.findings import Finding
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight.findings import finding_at


def _botocore_version() -> str:
    import botocore

    return str(botocore.__version__)


def check_aws(resource: Resource, entry: AwsApi) -> list[Finding]:
    findings = []
    for call in entry.translate(resource):
        where = f"{call.service} {call.operation}"
        source = f"botocore {_botocore_version()} service model, {where}; mapping per {entry.source}"
        for gap in call.gaps:
            message = f"input {gap!r} has no mapping to {where} in preflight's table: cannot judge it"
            findings.append(
                finding_at(resource, "PF-AWS-UNMAPPED", gap, resource.inputs.get(gap.split(".")[0]), message, source)
            )
        for problem in validate(call.service, call.operation, call.params):
            member = problem.path.lstrip(".") or "request"
            message = f"AWS would refuse {where}: {member} {problem.message}"
            findings.append(
                finding_at(resource, "PF-AWS-API", call.input_path(problem.path), problem.value, message, source)
            )
    return findings


def judges(type_token: str) -> bool:
    """The type has a definition here (the preflight stage's `unchecked` list leaves it out)."""
    return type_token in AWS or type_token.startswith(CLOUDFORMATION_PREFIX)


def check(resource: Resource, graph: Graph) -> list[Finding]:
    """Every way AWS would refuse what the graph asks of `resource`."""
    entry = AWS.get(resource.type)
    if entry is not None:
        return check_aws(resource, entry)
    if resource.type.startswith(CLOUDFORMATION_PREFIX):
        return cloudformation.check(resource)
    return []


__all__ = ["RULES", "check", "check_aws", "judges"]
