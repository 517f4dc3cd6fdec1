"""The floor: a bare Pulumi program that registers the same resources (types, names, parents,
providers, dependencies, inputs) under the same mocks, with no gpuinfra code in the loop. What is
left is what the Pulumi SDK itself costs; gpuinfra's preview is measured as a ratio to it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pulumi
import pulumi.runtime.settings
from pulumi.runtime import mocks as pulumi_mocks

from infra.engine import _Mocks
from infra.graph import STACK_TYPE, Graph, Resource


def order(graph: Graph) -> list[Resource]:
    """Parents, providers and dependencies before the resources that point at them."""
    done: dict[str, Resource] = {}
    by_urn = graph.by_urn

    def visit(resource: Resource) -> None:
        if resource.urn in done:
            return
        for urn in (resource.parent, resource.provider, *resource.dependencies):
            if urn and urn in by_urn and by_urn[urn].type != STACK_TYPE:
                visit(by_urn[urn])
        done[resource.urn] = resource

    for resource in graph.resources:
        if resource.type != STACK_TYPE:
            visit(resource)
    return list(done.values())


def replay(graph: Graph) -> Callable[[], None]:
    """A program registering the graph's resources with the plain SDK classes."""
    resources = order(graph)

    def program() -> None:
        made: dict[str, pulumi.Resource] = {}
        for r in resources:
            opts = pulumi.ResourceOptions(
                parent=made.get(r.parent or ""),
                provider=made.get(r.provider or ""),  # type: ignore[arg-type]
                depends_on=[made[d] for d in r.dependencies if d in made],
            )
            if r.is_provider:
                made[r.urn] = pulumi.ProviderResource(r.type.split(":")[-1], r.name, dict(r.inputs), opts)
            elif r.custom:
                made[r.urn] = pulumi.CustomResource(r.type, r.name, dict(r.inputs), opts)
            else:
                made[r.urn] = pulumi.ComponentResource(r.type, r.name, None, opts)

    return program


def run_floor(graph: Graph) -> None:
    pulumi.runtime.settings.ROOT.set(None)
    try:
        loop = asyncio.get_event_loop()
        if loop.is_closed():
            raise RuntimeError
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())
    pulumi.runtime.set_mocks(_Mocks(), project=graph.project, stack=graph.stack, preview=False)
    pulumi_mocks.test(replay(graph))()


__all__ = ["order", "replay", "run_floor"]
