"""Each Google resource of a graph judged twice, saying by what:

1. by the pulumi-gcp schema: every argument the program passes is one the installed provider's resource takes
   (the resource class's own argument list), so a misspelt or removed argument is caught before `pulumi up`;
2. by the Discovery document of the API that creates it (compute v1, storage v1, secretmanager v1): every value
   whose field the API's request schema defines is held to that definition (its enum, its integer type), walking
   nested objects and lists, with pulumi-gcp's field names mapped to the API's where they differ (RENAMES) or
   flattened (FLATTENED). A value the API would refuse is an error naming the schema and its revision.

The cost stage and this stage find this module through the cloud registry (its `preflight` part)."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpuinfra.clouds.gcp.catalog.discovery import document, source
from gpuinfra.clouds.gcp.preflight import training
from gpuinfra.findings import Finding
from gpuinfra.graph import Graph, Resource, is_known
from gpuinfra.preflight.findings import finding_at


@dataclass(frozen=True)
class ApiSchema:
    api: str
    version: str
    schema: str


TABLE: dict[str, ApiSchema] = {
    "gcp:compute/network:Network": ApiSchema("compute", "v1", "Network"),
    "gcp:compute/subnetwork:Subnetwork": ApiSchema("compute", "v1", "Subnetwork"),
    "gcp:compute/router:Router": ApiSchema("compute", "v1", "Router"),
    "gcp:compute/routerNat:RouterNat": ApiSchema("compute", "v1", "RouterNat"),
    "gcp:compute/firewall:Firewall": ApiSchema("compute", "v1", "Firewall"),
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": ApiSchema("compute", "v1", "InstanceProperties"),
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager": ApiSchema(
        "compute", "v1", "InstanceGroupManager"
    ),
    "gcp:compute/regionAutoscaler:RegionAutoscaler": ApiSchema("compute", "v1", "Autoscaler"),
    "gcp:compute/healthCheck:HealthCheck": ApiSchema("compute", "v1", "HealthCheck"),
    "gcp:compute/backendService:BackendService": ApiSchema("compute", "v1", "BackendService"),
    "gcp:compute/uRLMap:URLMap": ApiSchema("compute", "v1", "UrlMap"),
    "gcp:compute/targetHttpsProxy:TargetHttpsProxy": ApiSchema("compute", "v1", "TargetHttpsProxy"),
    "gcp:compute/globalForwardingRule:GlobalForwardingRule": ApiSchema("compute", "v1", "ForwardingRule"),
    "gcp:compute/globalAddress:GlobalAddress": ApiSchema("compute", "v1", "Address"),
    "gcp:compute/managedSslCertificate:ManagedSslCertificate": ApiSchema("compute", "v1", "SslCertificate"),
    "gcp:compute/securityPolicy:SecurityPolicy": ApiSchema("compute", "v1", "SecurityPolicy"),
    "gcp:compute/networkPeering:NetworkPeering": ApiSchema("compute", "v1", "NetworkPeering"),
    "gcp:storage/bucket:Bucket": ApiSchema("storage", "v1", "Bucket"),
    "gcp:storage/transferJob:TransferJob": ApiSchema("storagetransfer", "v1", "TransferJob"),
    "gcp:secretmanager/secret:Secret": ApiSchema("secretmanager", "v1", "Secret"),
    "gcp:billing/budget:Budget": ApiSchema("billingbudgets", "v1", "GoogleCloudBillingBudgetsV1Budget"),
}
"""The request schema each type is created by (the API's insert body; an instance template's properties)."""
RENAMES: dict[str, dict[str, str]] = {
    "AutoscalingPolicy": {
        "minReplicas": "minNumReplicas",
        "maxReplicas": "maxNumReplicas",
        "cooldownPeriod": "coolDownPeriodSec",
        "metrics": "customMetricUtilizations",
    },
    "AutoscalingPolicyCustomMetricUtilization": {
        "name": "metric",
        "target": "utilizationTarget",
        "type": "utilizationTargetType",
    },
    "Firewall": {"allows": "allowed", "denies": "denied"},
    "FirewallAllowed": {"protocol": "IPProtocol"},
    "ForwardingRule": {"ipProtocol": "IPProtocol", "ipAddress": "IPAddress"},
    "GoogleCloudBillingBudgetsV1Budget": {"budgetFilter": "budgetFilter", "thresholdRules": "thresholdRules"},
    "SecurityPolicyRuleMatcher": {"expr": "expr"},
    "TransferJob": {"project": "projectId"},
}
"""pulumi-gcp field -> the API's name for it, per API schema (pulumi-gcp follows Terraform's names)."""
FLATTENED: dict[str, dict[str, tuple[str, str]]] = {
    "InstanceGroupManager": {"distributionPolicyTargetShape": ("distributionPolicy", "targetShape")},
    "Network": {"routingMode": ("routingConfig", "routingMode")},
    "Bucket": {"publicAccessPrevention": ("iamConfiguration", "publicAccessPrevention")},
}
"""pulumi-gcp top-level fields that sit in a nested object of the API's schema."""
TABLE.update({t: ApiSchema(*s) for t, s in training.SCHEMAS.items()})  # a training cluster's types
RENAMES.update(training.RENAMES)
FLATTENED.update(training.FLATTENED)
CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    return CAMEL.sub("_", name).lower()


@cache
def arguments(type_token: str) -> frozenset[str] | None:
    """The arguments pulumi-gcp's class for `type_token` takes (snake_case); None if the class is not found."""
    package, module, name = type_token.split(":")[0], type_token.split(":")[1].split("/")[0], type_token.split(":")[2]
    try:
        cls = getattr(importlib.import_module(f"pulumi_{package}.{module}"), name)
    except (ImportError, AttributeError):
        return None
    return frozenset(inspect.signature(cls._internal_init).parameters) - {"__self__", "resource_name", "opts"}


def schema_problems(r: Resource) -> Iterator[Finding]:
    """Arguments the installed pulumi-gcp does not take."""
    from importlib.metadata import version

    known = arguments(r.type)
    where = f"pulumi-gcp {version('pulumi-gcp')} Python SDK, {r.type.split(':')[2]} arguments"
    if known is None:
        yield finding_at(r, "PF-GCP-SCHEMA", "", r.type, f"pulumi-gcp has no resource {r.type}", where)
        return
    for key, value in r.inputs.items():
        if snake(key) not in known and not key.startswith("__"):
            yield finding_at(
                r,
                "PF-GCP-SCHEMA",
                key,
                value,
                f"pulumi-gcp's {r.type.split(':')[2]} takes no argument {key!r}",
                where,
            )


def _resolve(doc: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema a property's value follows ($ref, or an inline object), else None."""
    ref = prop.get("$ref")
    if ref:
        return {"name": ref, **doc["schemas"][ref]}
    if prop.get("type") == "object" and "properties" in prop:
        return {"name": "", **prop}
    return None


def walk(doc: dict[str, Any], schema: dict[str, Any], value: Any, path: str) -> Iterator[tuple[str, Any, str]]:
    """(path, value, what is wrong) for every value the schema's definitions refuse."""
    if not isinstance(value, dict):
        return
    name = schema.get("name", "")
    renames, flattened = RENAMES.get(name, {}), FLATTENED.get(name, {})
    for key, item in value.items():
        if key in flattened:
            outer, inner = flattened[key]
            holder = _resolve(doc, schema["properties"].get(outer, {}))
            if holder is not None:
                yield from walk(doc, holder, {inner: item}, path)
            continue
        field = str(renames.get(key, key))
        prop = schema.get("properties", {}).get(field)
        if prop is None or not is_known(item):
            continue
        yield from _value(doc, prop, item, f"{path}.{key}" if path else key, field, name)


def _value(
    doc: dict[str, Any], prop: dict[str, Any], item: Any, path: str, field: str, owner: str
) -> Iterator[tuple[str, Any, str]]:
    if prop.get("type") == "array" and isinstance(item, list):
        for i, element in enumerate(item):
            yield from _value(doc, prop["items"], element, f"{path}[{i}]", field, owner)
        return
    if prop.get("type") == "array" and isinstance(item, dict):
        prop = prop["items"]  # pulumi-gcp takes a single block where the API takes a list of one
    enum = prop.get("enum")
    if enum and isinstance(item, str) and item not in enum:
        yield path, item, f"{owner}.{field} must be one of {', '.join(enum)}"
    if prop.get("type") == "integer" and isinstance(item, str | float | bool) and not _integral(item):
        yield path, item, f"{owner}.{field} is an integer ({prop.get('format', 'int')})"
    values = prop.get("additionalProperties")
    if prop.get("type") == "object" and isinstance(values, dict) and isinstance(item, dict):
        for key, element in item.items():  # a map keyed by ID (hypercomputecluster's resources)
            yield from _value(doc, values, element, f"{path}.{key}", field, owner)
        return
    nested = _resolve(doc, prop)
    if nested is not None:
        yield from walk(doc, nested, item, path)


def _integral(item: Any) -> bool:
    if isinstance(item, bool):
        return False
    if isinstance(item, float):
        return item.is_integer()
    return bool(re.fullmatch(r"-?[0-9]+", item))


def discovery_problems(r: Resource) -> Iterator[Finding]:
    entry = TABLE[r.type]
    doc = document(entry.api, entry.version)
    where = f"{source(entry.api, entry.version)}, schema {entry.schema}"
    root = {"name": entry.schema, **doc["schemas"][entry.schema]}
    shape = training.SHAPES.get(r.type)
    for path, value, problem in walk(doc, root, shape(r.inputs) if shape else r.inputs, ""):
        yield finding_at(r, "PF-GCP-API", path, value, f"Google would refuse it: {problem}", where)


def judges(type_token: str) -> bool:
    """This stage judges the type (the preflight stage's `unchecked` list leaves it out)."""
    return type_token in TABLE or type_token in training.OWN


def check(r: Resource, graph: Graph) -> list[Finding]:
    """Every way pulumi-gcp or Google's API would refuse what the graph asks of `r`."""
    found = list(schema_problems(r))
    if r.type in TABLE:
        found += discovery_problems(r)
    if r.type in training.OWN:
        found += training.own_problems(r)
    return found


__all__ = ["FLATTENED", "RENAMES", "TABLE", "check", "judges", "walk"]
