"""The graphs a stack's data flows reach into: the model registry's, for training (weight uploads) and EC2
inference (weight reads) stacks. Found beside the stack file (one organization, one registry) and run in the
embedded engine like the stack itself; what cannot be found or run is left out, so its flows are "unknown"."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from gpuinfra.errors import InputError
from gpuinfra.graph import Graph
from gpuinfra.load import Inputs, load_inputs
from gpuinfra.spec import RegistrySpec


@lru_cache(maxsize=8)
def _registry_graph(stack_file: Path, org_file: Path, mtimes: tuple[float, float]) -> Graph | None:
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.pulumi.preview import program_graph

    try:
        return program_graph(load_inputs(stack_file, org_file))
    except (InputError, EngineError):
        return None


def peer_graphs(inputs: Inputs) -> list[Graph]:
    """The registry stacks of the same organization file (not the stack itself), as graphs."""
    registry = inputs.org.org.registry
    if registry is None or isinstance(inputs.spec, RegistrySpec):
        return []
    org_file = inputs.org.path.resolve()
    found = []
    for path in sorted(inputs.stack.path.resolve().parent.glob("Pulumi.*.yaml")):
        if path == inputs.stack.path.resolve():
            continue
        try:
            peer = load_inputs(path, org_file)
        except InputError:
            continue
        if isinstance(peer.spec, RegistrySpec) and peer.spec.account == registry.account:
            graph = _registry_graph(path, org_file, (path.stat().st_mtime, org_file.stat().st_mtime))
            if graph is not None:
                found.append(graph)
    return found


__all__ = ["peer_graphs"]
