"""Preflight's compiled definitions on disk (gpuinfra.store.disk): a sound entry is read back as built,
anything else (absent, corrupted, truncated, another key's) is rebuilt, and the findings never change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds.aws.preflight import botocore_check, cloudformation
from gpuinfra.preflight import preflight
from gpuinfra.store import disk as compiled
from helpers import example_graph
from planting import planted, setting

LT = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path))
    yield tmp_path / "compiled"


def _forget() -> None:
    """Drop the per-process copies, so the next preflight reads the disk (or the libraries) again."""
    for fn in (cloudformation._types, cloudformation._schema, cloudformation._validator, botocore_check.service_model):
        fn.cache_clear()
    botocore_check.operation.cache_clear()
    botocore_check.shape.cache_clear()


def test_an_entry_reads_back_as_built_and_the_builder_runs_once(cache: Path) -> None:
    calls: list[int] = []

    def build() -> dict[str, object]:
        calls.append(1)
        return {"a": [1, 2.5, "x", None, True], "b": {"c": {}}}

    first = compiled.cached("k", build)
    second = compiled.cached("k", build)
    assert first == second == {"a": [1, 2.5, "x", None, True], "b": {"c": {}}}
    assert len(calls) == 1
    assert [p.name for p in cache.iterdir() if p.name.startswith(".tmp-")] == []  # nothing half-written left


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[:-3],  # truncated
        lambda blob: blob[:40] + bytes([blob[40] ^ 0xFF]) + blob[41:],  # one byte flipped in the content
        lambda blob: b"",  # emptied
    ],
    ids=["truncated", "flipped", "empty"],
)
def test_a_damaged_entry_is_ignored_and_rebuilt(cache: Path, damage) -> None:  # type: ignore[no-untyped-def]
    compiled.cached("k", lambda: {"v": "good"})
    (entry,) = cache.glob("*.marshal")  # the one entry (beside the pruning stamp)
    entry.write_bytes(damage(entry.read_bytes()))
    assert compiled.read("k") is None
    assert compiled.cached("k", lambda: {"v": "rebuilt"}) == {"v": "rebuilt"}
    assert compiled.read("k") == {"v": "rebuilt"}


def test_another_keys_entry_is_not_trusted(cache: Path) -> None:
    """An entry moved under another key's file name (e.g. another library version's) is refused: the digest
    covers the key, not only the content."""
    compiled.cached("botocore 1.0", lambda: {"v": "old"})
    (old,) = cache.glob("*.marshal")
    target = compiled._path("botocore 2.0")
    old.rename(target)
    assert compiled.read("botocore 2.0") is None


def test_an_unwritable_cache_still_gives_the_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(blocker))
    assert compiled.cached("k", lambda: {"v": 1}) == {"v": 1}


def test_findings_are_the_same_from_the_libraries_and_from_the_disk(cache: Path) -> None:
    """A graph with an EC2 API violation (botocore model) and the PCS cluster (CloudFormation schema), judged
    cold (the libraries read, the cache written) and again from the cache alone."""
    graph, _ = planted(
        example_graph("llm-train"), LT, setting("metadataOptions.httpTokens", "sometimes")
    )  # EC2 API Reference: HttpTokens is optional | required
    _forget()
    try:
        cold = preflight(graph, load_catalog())
        assert any(p.name.endswith(".marshal") for p in cache.iterdir())
        _forget()
        warm = preflight(graph, load_catalog())
    finally:
        _forget()
    assert any(f.rule == "PF-AWS-API" and f.path == "metadataOptions.httpTokens" for f in cold)
    assert warm == cold
    assert any(t.startswith("aws-native:") for t in (r.type for r in graph.resources))
