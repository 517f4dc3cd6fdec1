"""Preview: run a checked stack's Pulumi program in the embedded engine and return its graph."""

from __future__ import annotations

import json
from typing import Any

from .engine import run
from .graph import SECRET, Graph
from .inputs import Inputs
from .spec import ORG_KEY

PROJECT = "gpuinfra"


def engine_config(inputs: Inputs) -> tuple[dict[str, str], tuple[str, ...]]:
    """The stack's config as the Pulumi CLI hands it to a program: strings, structured values as
    JSON, secrets (which only the CLI can decrypt) blinded."""
    config: dict[str, str] = {}
    for key, value in inputs.stack.config.items():
        if key in inputs.stack.secret_keys:
            config[key] = SECRET
        else:
            config[key] = value if isinstance(value, str) else json.dumps(value)
    config[ORG_KEY] = str(inputs.org.path.resolve())
    return config, tuple(sorted(inputs.stack.secret_keys))


def preview_graph(inputs: Inputs) -> Graph:
    from .program import main

    config, secrets = engine_config(inputs)
    return run(main, project=PROJECT, stack=inputs.stack.name, config=config, secret_keys=secrets)


def resources_json(graph: Graph) -> list[dict[str, Any]]:
    return [
        {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "parent": r.parent,
            "provider": r.provider,
            "custom": r.custom,
            "dependencies": list(r.dependencies),
            "inputs": r.inputs,
        }
        for r in graph.resources
    ]


__all__ = ["PROJECT", "engine_config", "preview_graph", "resources_json"]
