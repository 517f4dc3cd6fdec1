"""Where a resource is billed (its provider's region and account) and which component it belongs to.

Each is computed once per provider / parent and cached: pricing a 10,000-resource graph parses each
provider's JSON-encoded inputs once, not once per resource.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..graph import Graph, Resource, is_known
from .model import Where

_ACCOUNT_IN_ARN = re.compile(r"^arn:aws[\w-]*:iam::(\d{12}):")
NO_COMPONENT = "(stack)"


class Locator:
    def __init__(self, graph: Graph, default_region: str | None = None) -> None:
        self.graph = graph
        self.default_region = default_region
        self._where: dict[str, Where] = {}
        self._component: dict[str, str] = {}

    def where(self, resource: Resource) -> Where:
        key = resource.provider or ""
        found = self._where.get(key)
        if found is None:
            provider = self.graph.by_urn.get(key)
            found = provider_where(provider.inputs if provider else {}, self.default_region)
            self._where[key] = found
        return found

    def component(self, resource: Resource) -> str:
        key = resource.parent or ""
        found = self._component.get(key)
        if found is None:
            component = self.graph.component_of(resource)
            found = f"{component.type.rsplit(':', 1)[-1]} {component.name}" if component else NO_COMPONENT
            self._component[key] = found
        return found


def provider_where(inputs: dict[str, Any], default_region: str | None = None) -> Where:
    """Region and account of an aws provider: its `region`, its `allowedAccountIds` or assumed role's ARN."""
    region = inputs.get("region")
    region = region if isinstance(region, str) and is_known(region) and region else default_region
    account = _first(_decode(inputs.get("allowedAccountIds")))
    if account is None:
        roles = _decode(inputs.get("assumeRoles")) or _decode(inputs.get("assumeRole"))
        role = roles[0] if isinstance(roles, list) and roles else roles
        match = _ACCOUNT_IN_ARN.match(str((role or {}).get("roleArn", ""))) if isinstance(role, dict) else None
        account = match.group(1) if match else None
    return Where(region, account if isinstance(account, str) else None)


def _decode(value: Any) -> Any:
    """Provider inputs arrive JSON-encoded from the engine, as objects from a real state file."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _first(value: Any) -> str | None:
    if isinstance(value, list) and value and isinstance(value[0], str) and is_known(value[0]):
        return value[0]
    return None


__all__ = ["NO_COMPONENT", "Locator", "provider_where"]
