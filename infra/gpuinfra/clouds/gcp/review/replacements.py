"""Which changes replace a Google resource, read from the API's own Discovery document rather than a hand-kept
table: a collection with neither `update` nor `patch` (regional instance templates, SSL certificates) cannot be
changed in place, so any change replaces it; a resource's name, region and project are in its URL, which Google
never renames, so changing one replaces it everywhere; labels change in place where the collection has
`setLabels`. Any other change is left to the review's default (an update). The review stage asks the cloud
registry for this part by the type's package (`replacements`)."""

from __future__ import annotations

import re
from typing import Any

from gpuinfra.clouds.gcp.catalog.discovery import document
from gpuinfra.graph import UNKNOWN
from gpuinfra.review.effects import MAY_REPLACE

COLLECTIONS: dict[str, tuple[str, str, str]] = {
    "gcp:compute/network:Network": ("compute", "v1", "networks"),
    "gcp:compute/subnetwork:Subnetwork": ("compute", "v1", "subnetworks"),
    "gcp:compute/router:Router": ("compute", "v1", "routers"),
    "gcp:compute/firewall:Firewall": ("compute", "v1", "firewalls"),
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": ("compute", "v1", "regionInstanceTemplates"),
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager": (
        "compute",
        "v1",
        "regionInstanceGroupManagers",
    ),
    "gcp:compute/regionAutoscaler:RegionAutoscaler": ("compute", "v1", "regionAutoscalers"),
    "gcp:compute/healthCheck:HealthCheck": ("compute", "v1", "healthChecks"),
    "gcp:compute/backendService:BackendService": ("compute", "v1", "backendServices"),
    "gcp:compute/uRLMap:URLMap": ("compute", "v1", "urlMaps"),
    "gcp:compute/targetHttpsProxy:TargetHttpsProxy": ("compute", "v1", "targetHttpsProxies"),
    "gcp:compute/globalForwardingRule:GlobalForwardingRule": ("compute", "v1", "globalForwardingRules"),
    "gcp:compute/globalAddress:GlobalAddress": ("compute", "v1", "globalAddresses"),
    "gcp:compute/managedSslCertificate:ManagedSslCertificate": ("compute", "v1", "sslCertificates"),
    "gcp:compute/securityPolicy:SecurityPolicy": ("compute", "v1", "securityPolicies"),
    "gcp:storage/bucket:Bucket": ("storage", "v1", "buckets"),
    "gcp:storage/transferJob:TransferJob": ("storagetransfer", "v1", "transferJobs"),
    "gcp:filestore/instance:Instance": ("file", "v1", "projects.locations.instances"),
    "gcp:hypercomputecluster/cluster:Cluster": ("hypercomputecluster", "v1", "projects.locations.clusters"),
}
"""The API collection each type is created in (a nested one by its dotted path)."""
REQUESTS = {"gcp:filestore/instance:Instance": "Instance", "gcp:hypercomputecluster/cluster:Cluster": "Cluster"}
"""The request schema of the types whose documents mark fields "Immutable.": a change to one replaces."""
IN_PLACE = ("update", "patch")
IN_URL = ("name", "region", "project")
URL_OF: dict[str, tuple[str, ...]] = {
    "gcp:filestore/instance:Instance": ("location",),  # projects/{project}/locations/{location}/instances/{name}
    "gcp:hypercomputecluster/cluster:Cluster": ("location", "clusterId"),
}
"""The further parts of a resource's URL, per type (a location-scoped collection's, beside IN_URL's)."""
REPLACE = "replace"
IMMUTABLE = re.compile(r"\bImmutable\.")


def effect(type_token: str, path: str) -> tuple[str, str] | None:
    """(replace, why) when changing `path` replaces a resource of `type_token`; None: the review's default."""
    entry = COLLECTIONS.get(type_token)
    if entry is None:
        return None
    api, version, collection = entry
    doc = document(api, version)
    methods = _collection(doc, collection)["methods"]
    top = path.split(".", 1)[0].split("[", 1)[0]
    if top in IN_URL + URL_OF.get(type_token, ()):
        return REPLACE, f"{api} {version} Discovery document: the {top} is part of a {collection} resource's URL"
    if top == "labels" and "setLabels" in methods:
        return None
    if not any(m in methods for m in IN_PLACE):
        return REPLACE, f"{api} {version} Discovery document: {collection} has no update or patch method"
    field = immutable_field(doc, REQUESTS[type_token], path) if type_token in REQUESTS else None
    if field is not None:
        return REPLACE, f"{api} {version} Discovery document: {field} is Immutable"
    return None


def _collection(doc: dict[str, Any], dotted: str) -> dict[str, Any]:
    node: dict[str, Any] = doc
    for name in dotted.split("."):
        node = node["resources"][name]
    return node


def immutable_field(doc: dict[str, Any], schema: str, path: str) -> str | None:
    """The first field along `path` (pulumi-gcp's, camel-cased: lists, maps and nested objects walked alike) whose
    description says "Immutable.", as `Schema.field`; None when none on the way does or the path leaves the
    schema."""
    owner, node = schema, doc["schemas"][schema]
    for part in path.split("."):
        prop = node.get("properties", {}).get(part.split("[", 1)[0])
        if prop is None:
            return None
        if IMMUTABLE.search(prop.get("description") or ""):
            return f"{owner}.{part.split('[', 1)[0]}"
        while isinstance(prop.get("items") or prop.get("additionalProperties"), dict):
            prop = prop.get("items") or prop["additionalProperties"]
        if "$ref" not in prop:
            return None
        owner, node = prop["$ref"], doc["schemas"][prop["$ref"]]
    return None


def marks(type_token: str, path: str, before: Any, after: Any, inputs: dict[str, Any]) -> tuple[str, str] | None:
    """The registry's part (the review asks every cloud with the change's values): Google's mark, a possible
    replacement while the new value is unknown until apply."""
    found = effect(type_token, path)
    return None if found is None else ((MAY_REPLACE if after == UNKNOWN else found[0]), found[1])


__all__ = ["COLLECTIONS", "effect", "immutable_field", "marks"]
