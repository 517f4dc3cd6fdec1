"""Which changes replace a Google resource, read from the API's own Discovery document rather than a hand-kept
table: a collection with neither `update` nor `patch` (regional instance templates, SSL certificates) cannot be
changed in place, so any change replaces it; a resource's name, region and project are in its URL, which Google
never renames, so changing one replaces it everywhere; labels change in place where the collection has
`setLabels`. Any other change is left to the review's default (an update). The review stage asks the cloud
registry for this part by the type's package (`replacements`)."""

from __future__ import annotations

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
}
"""The API collection each type is created in."""
IN_PLACE = ("update", "patch")
IN_URL = ("name", "region", "project")
REPLACE = "replace"


def effect(type_token: str, path: str) -> tuple[str, str] | None:
    """(replace, why) when changing `path` replaces a resource of `type_token`; None: the review's default."""
    entry = COLLECTIONS.get(type_token)
    if entry is None:
        return None
    api, version, collection = entry
    methods = document(api, version)["resources"][collection]["methods"]
    top = path.split(".", 1)[0].split("[", 1)[0]
    if top in IN_URL:
        return REPLACE, f"{api} {version} Discovery document: the {top} is part of a {collection} resource's URL"
    if top == "labels" and "setLabels" in methods:
        return None
    if not any(m in methods for m in IN_PLACE):
        return REPLACE, f"{api} {version} Discovery document: {collection} has no update or patch method"
    return None


def marks(type_token: str, path: str, before: Any, after: Any, inputs: dict[str, Any]) -> tuple[str, str] | None:
    """The registry's part (the review asks every cloud with the change's values): Google's mark, a possible
    replacement while the new value is unknown until apply."""
    found = effect(type_token, path)
    return None if found is None else ((MAY_REPLACE if after == UNKNOWN else found[0]), found[1])


__all__ = ["COLLECTIONS", "effect", "marks"]
