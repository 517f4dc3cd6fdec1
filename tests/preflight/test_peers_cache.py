"""The registry's graph that access flows are judged against, kept across processes by content: read back equal
to what the engine built, and built again when the registry's stack file changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gpuinfra.pulumi import peers

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_graph_reads_back_equal_and_is_rebuilt_on_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("org.yaml", "Pulumi.model-registry.yaml"):
        shutil.copy(ROOT / "stacks" / name, tmp_path / name)
    stack, org = tmp_path / "Pulumi.model-registry.yaml", tmp_path / "org.yaml"
    built = peers._built(stack, org)
    assert built is not None and any(r.type == "aws:kms/key:Key" for r in built.resources)

    calls: list[Path] = []
    real = peers._built
    monkeypatch.setattr(peers, "_built", lambda s, o: calls.append(s) or real(s, o))
    peers._registry_graph.cache_clear()
    try:
        first = peers._registry_graph(stack, org, (1.0, 1.0))  # built and stored
        peers._registry_graph.cache_clear()
        again = peers._registry_graph(stack, org, (1.0, 1.0))  # from the disk
        assert first == again == built
        assert len(calls) == 1
        stack.write_text(stack.read_text() + "\n# changed\n")
        peers._registry_graph.cache_clear()
        peers._registry_graph(stack, org, (1.0, 1.0))
        assert len(calls) == 2
    finally:
        peers._registry_graph.cache_clear()
