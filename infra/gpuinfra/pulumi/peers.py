"""The graphs a stack's data flows reach into: the model registry's, for training (weight uploads) and EC2
inference (weight reads) stacks. Found beside the stack file (one organization, one registry) and run in the
embedded engine like the stack itself; what cannot be found or run is left out, so its flows are "unknown"."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuinfra.errors import InputError
from gpuinfra.graph import Graph, Resource
from gpuinfra.load import Inputs, load_inputs
from gpuinfra.spec import RegistrySpec


@lru_cache(maxsize=8)
def _registry_graph(stack_file: Path, org_file: Path, mtimes: tuple[float, float]) -> Graph | None:
    """Per process by the files' modification times; across processes by content (the stack and org files, the
    code fingerprint with the dependency versions), so a fresh `gpuinfra preview` does not run the registry's
    program in the engine again."""
    import hashlib

    from gpuinfra.store.disk import cached
    from gpuinfra.store.fingerprint import code_fingerprint

    try:
        files = hashlib.sha256(stack_file.read_bytes() + b"\0" + org_file.read_bytes()).hexdigest()
    except OSError:
        return _built(stack_file, org_file)
    key = f"registry-graph-1|{code_fingerprint()}|{stack_file.name}|{files}"
    return _from_plain(cached(key, lambda: _to_plain(_built(stack_file, org_file))))


_FIELDS = ("urn", "type", "name", "parent", "provider", "custom", "dependencies", "inputs", "protect")


def _to_plain(graph: Graph | None) -> dict[str, Any]:
    if graph is None:
        return {"graph": None}
    rows = [[*(getattr(r, f) for f in _FIELDS), r.retain_on_delete] for r in graph.resources]
    return {"graph": [graph.stack, graph.project, rows]}


def _from_plain(data: dict[str, Any]) -> Graph | None:
    if data["graph"] is None:
        return None
    stack, project, rows = data["graph"]
    resources = (
        Resource(row[0], row[1], row[2], row[3], row[4], row[5], tuple(row[6]), row[7], row[8], row[9]) for row in rows
    )
    return Graph(stack, project, tuple(resources))


def _built(stack_file: Path, org_file: Path) -> Graph | None:
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.pulumi.preview import program_graph

    try:
        return program_graph(load_inputs(stack_file, org_file))
    except (InputError, EngineError):
        return None


def _may_be_registry(path: Path) -> bool:
    """A first look at the parsed file (parsed once per process, spec/yamlfile.py): a stack whose config holds no
    registry spec is not one, and is not validated here; in a repository of n stacks, validating every other
    stack for each stack's preview made previewing them all O(n^2). What cannot be told is looked at whole."""
    from gpuinfra.spec.documents import NAMESPACE
    from gpuinfra.spec.yamlfile import read_yaml

    try:
        data = read_yaml(path, "stack file").data
    except InputError:
        return False  # load_inputs would refuse it too
    config = data.get("config") if isinstance(data, dict) else None
    return not isinstance(config, dict) or f"{NAMESPACE}:registry" in config


def peer_graphs(inputs: Inputs) -> list[Graph]:
    """The registry stacks of the same organization file (not the stack itself), as graphs."""
    registry = inputs.org.org.registry
    if registry is None or isinstance(inputs.spec, RegistrySpec):
        return []
    org_file = inputs.org.path.resolve()
    found = []
    for path in sorted(inputs.stack.path.resolve().parent.glob("Pulumi.*.yaml")):
        if path == inputs.stack.path.resolve() or not _may_be_registry(path):
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
