"""Judge each resource of a graph by its provider's own definition (the table), plus the documented rules."""

from __future__ import annotations

from collections.abc import Iterable

import gpuinfra.preflight.cloudformation as cloudformation
import gpuinfra.preflight.kubernetes as kubernetes
from gpuinfra.catalog import Catalog
from gpuinfra.clouds import type_part
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight.botocore_check import validate
from gpuinfra.preflight.findings import PreflightFinding
from gpuinfra.preflight.rules import RULES
from gpuinfra.preflight.table import AWS, CLOUDFORMATION_PREFIX, KUBERNETES_PREFIX, NOT_JUDGED, AwsApi

UNCHECKED = "PF-UNCHECKED"
CRASH = "PF-CRASH"


def _botocore_version() -> str:
    import botocore

    return str(botocore.__version__)


def check_aws(resource: Resource, entry: AwsApi) -> list[PreflightFinding]:
    findings = []
    for call in entry.translate(resource):
        where = f"{call.service} {call.operation}"
        source = f"botocore {_botocore_version()} service model, {where}; mapping per {entry.source}"
        for gap in call.gaps:
            message = f"input {gap!r} has no mapping to {where} in preflight's table: cannot judge it"
            findings.append(
                PreflightFinding.at(
                    resource, "PF-AWS-UNMAPPED", gap, resource.inputs.get(gap.split(".")[0]), message, source
                )
            )
        for problem in validate(call.service, call.operation, call.params):
            member = problem.path.lstrip(".") or "request"
            message = f"AWS would refuse {where}: {member} {problem.message}"
            findings.append(
                PreflightFinding.at(
                    resource, "PF-AWS-API", call.input_path(problem.path), problem.value, message, source
                )
            )
    return findings


def check_resource(resource: Resource, graph: Graph) -> list[PreflightFinding]:
    own = type_part(resource.type, "preflight")  # a cloud's own definitions for its types; None: built-in
    if own is not None:
        return own.check(resource, graph)  # type: ignore[no-any-return]
    entry = AWS.get(resource.type)
    if entry is not None:
        return check_aws(resource, entry)
    if resource.type.startswith(CLOUDFORMATION_PREFIX):
        return cloudformation.check(resource)
    if resource.type.startswith(KUBERNETES_PREFIX) and resource.type not in NOT_JUDGED:
        return kubernetes.check_object(resource, graph)
    return []


def unchecked(graph: Graph, resources: Iterable[Resource]) -> list[PreflightFinding]:
    """One info finding per type (or Kubernetes kind) nothing here can judge: said, not silently passed."""
    seen: dict[str, Resource] = {}
    for r in resources:
        if r.type in AWS or r.type.startswith(CLOUDFORMATION_PREFIX):
            continue
        own = type_part(r.type, "preflight")
        if own is not None and own.judges(r.type):
            continue
        if r.type.startswith(KUBERNETES_PREFIX) and r.type not in NOT_JUDGED and kubernetes.is_checked(r, graph):
            continue
        seen.setdefault(r.type, r)
    findings = []
    for type_, r in sorted(seen.items()):
        if type_ in NOT_JUDGED:
            why = "its content (chart values) is defined by the chart, which no packaged library carries"
        elif type_.startswith(KUBERNETES_PREFIX):
            why = "a custom resource: its CRD schema is not packaged with any library"
        else:
            why = "no entry in preflight's table"
        message = f"{type_} is not judged by preflight: {why}; the conformance tests check it against upstream"
        findings.append(
            PreflightFinding.at(r, UNCHECKED, "", type_, message, "infra/gpuinfra/preflight/table.py", level="info")
        )
    return findings


def preflight(graph: Graph, catalog: Catalog) -> list[PreflightFinding]:
    """Every way AWS or Kubernetes would refuse (or silently drop) what the graph asks for, sorted."""
    findings: list[PreflightFinding] = []
    resources = [r for r in graph.custom_resources()]
    for resource in resources:
        try:
            findings += check_resource(resource, graph)
        except Exception as exc:  # a crashing check is a finding, never a pass
            message = f"preflight could not judge this resource: {type(exc).__name__}: {exc}"
            findings.append(PreflightFinding.at(resource, CRASH, "", resource.type, message, "infra/preflight"))
    for rule in RULES:
        try:
            findings += rule.run(graph, catalog)
        except Exception as exc:
            stack = next(iter(graph.resources))
            message = f"rule {rule.id} crashed: {type(exc).__name__}: {exc}"
            findings.append(PreflightFinding.at(stack, CRASH, "", rule.id, message, rule.source))
    findings += unchecked(graph, resources)
    return sorted(set(findings), key=lambda f: (f.level != "error", f.urn, f.rule, f.path, f.message))


__all__ = ["CRASH", "UNCHECKED", "check_aws", "check_resource", "preflight", "unchecked"]
