"""Preview: run a checked stack's Pulumi program in the embedded engine and return its graph."""

from __future__ import annotations

import json

from gpuinfra.graph import SECRET, Graph
from gpuinfra.load import Inputs
from gpuinfra.plan import Plan
from gpuinfra.pulumi.engine import run

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
    return config, tuple(sorted(inputs.stack.secret_keys))


def preview_graph(inputs: Inputs, plan: Plan) -> Graph:
    """The graph `pulumi preview` would register for an already checked stack. The program's own `load()`
    (config -> inputs -> plan -> validators) is what the caller just did, so only `build` runs here:
    validators run once per preview."""
    from gpuinfra.pulumi.program import build

    config, secrets = engine_config(inputs)
    return run(
        lambda: build(inputs, plan), project=PROJECT, stack=inputs.stack.name, config=config, secret_keys=secrets
    )


__all__ = ["PROJECT", "engine_config", "preview_graph"]
