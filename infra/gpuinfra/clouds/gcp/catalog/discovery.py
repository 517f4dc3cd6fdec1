"""Google's own API definitions, offline: the Discovery documents google-api-python-client ships
(googleapiclient/discovery_cache/documents/<api>.<version>.json). Preflight judges each generated request by
them, and the validators read the Compute Engine quota metric names from them (the Quota.metric enum)."""

from __future__ import annotations

import importlib.resources
import json
from functools import cache
from typing import Any

from gpuinfra.errors import GpuinfraError

PACKAGE = "googleapiclient.discovery_cache"


class DiscoveryError(GpuinfraError):
    """A Discovery document cannot be read: the checks that need it fail closed."""


@cache
def document(api: str, version: str) -> dict[str, Any]:
    """The Discovery document of `api` `version` (e.g. compute v1), read once per process."""
    try:
        path = importlib.resources.files(PACKAGE) / "documents" / f"{api}.{version}.json"
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (ModuleNotFoundError, OSError, ValueError) as exc:
        raise DiscoveryError(
            f"Google's {api} {version} Discovery document cannot be read ({type(exc).__name__}: {exc}): install "
            "google-api-python-client (a gpuinfra dependency)"
        ) from None
    return loaded


def source(api: str, version: str) -> str:
    """How a finding names the document it was judged by: the API, its revision and the client that ships it."""
    from importlib.metadata import version as installed

    revision = document(api, version).get("revision")
    client = installed("google-api-python-client")
    return f"{api} {version} Discovery document, revision {revision} (google-api-python-client {client})"


def quota_metrics() -> frozenset[str]:
    """Compute Engine's quota metric names (compute v1 Quota.metric)."""
    return frozenset(document("compute", "v1")["schemas"]["Quota"]["properties"]["metric"]["enum"])


__all__ = ["DiscoveryError", "document", "quota_metrics", "source"]
