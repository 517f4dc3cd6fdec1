"""The floor: a bare Pulumi program that registers the same resources (types, names, parents,
providers, dependencies, inputs) under the same mocks, with no gpuinfra code in the loop. What is
left is what the Pulumi SDK itself costs; gpuinfra's preview is measured as a ratio to it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi.runtime.settings
from gpuinfra.graph import STACK_TYPE, Graph, Resource
from gpuinfra.pulumi.engine import engine_settings
from gpuinfra.pulumi.engine.mocks import AwsMocks
from pulumi.runtime import mocks as pulumi_mocks


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


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def sdk_class(type_token: str) -> Any | None:
    """The pulumi-aws / pulumi-aws-native / pulumi-gcp / pulumi-kubernetes class a hand-written program would use
    for a type token (`aws-native:pcs:ComputeNodeGroup` -> pulumi_aws_native.pcs.ComputeNodeGroup)."""
    package, module, name = type_token.split(":")
    if package == "aws":
        import pulumi_aws

        return getattr(getattr(pulumi_aws, module.split("/")[0], None), name, None)
    if package == "aws-native":
        import pulumi_aws_native

        return getattr(getattr(pulumi_aws_native, module, None), name, None)
    if package == "gcp":
        import pulumi_gcp

        return getattr(getattr(pulumi_gcp, module.split("/")[0], None), name, None)
    if package == "kubernetes":
        import pulumi_kubernetes

        group, _, version = module.rpartition("/")
        path = [*group.split(".")[:1], version] if group else [version]
        node: Any = pulumi_kubernetes
        for part in path:
            node = getattr(node, part.replace("-", "_"), None)
        return getattr(node, name, None) if node is not None else None
    return None


def typed_kwargs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Top-level inputs as the SDK's snake_case keywords; nested values keep their wire (camelCase) keys."""
    return {_CAMEL.sub("_", k).lower(): v for k, v in inputs.items() if k not in ("apiVersion", "kind")}


def replay(graph: Graph) -> Callable[[], None]:
    """A program registering the graph's resources with the SDK classes a person would use: the typed
    pulumi-aws / pulumi-kubernetes class with the same inputs, a plain CustomResource where none fits
    (CRDs), providers and components as such."""
    resources = order(graph)
    classes = {r.type: sdk_class(r.type) for r in resources if r.custom and not r.is_provider}

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
            elif not r.custom:
                made[r.urn] = pulumi.ComponentResource(r.type, r.name, None, opts)
            else:
                cls = classes.get(r.type)
                try:
                    made[r.urn] = cls(r.name, opts=opts, **typed_kwargs(r.inputs)) if cls else None  # type: ignore[assignment]
                except TypeError:
                    made[r.urn] = None  # type: ignore[assignment]
                if made[r.urn] is None:
                    made[r.urn] = pulumi.CustomResource(r.type, r.name, dict(r.inputs), opts)

    return program


def run_floor(graph: Graph) -> None:
    pulumi.runtime.settings.ROOT.set(None)
    try:
        loop = asyncio.get_event_loop()
        if loop.is_closed():
            raise RuntimeError
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())
    pulumi.runtime.set_mocks(AwsMocks(), project=graph.project, stack=graph.stack, preview=False)
    with engine_settings():  # the engine's own run settings: the comparison is code against code
        pulumi_mocks.test(replay(graph))()


__all__ = ["order", "replay", "run_floor", "sdk_class", "typed_kwargs"]
