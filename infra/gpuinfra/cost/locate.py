"""Where a resource is billed (its provider's region and account) and which component it belongs to.

Each is computed once per provider / parent and cached: pricing a 10,000-resource graph parses each
provider's JSON-encoded inputs once, not once per resource.
"""

from __future__ import annotations

import re

from gpuinfra.cost.model import Where
from gpuinfra.graph import Graph, Resource, views

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
            found = views.location(provider.inputs if provider else {}, self.default_region)
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


__all__ = ["NO_COMPONENT", "Locator"]
