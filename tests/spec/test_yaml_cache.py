"""A stack file's parse is kept on disk by content (spec/yamlfile.py `_compiled`): a fresh process reads the same
data and line numbers a parse gives, a tampered entry is ignored, and a file that does not parse is refused
every time (nothing is stored for it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.spec import yamlfile
from gpuinfra.spec.yamlfile import parse_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[2]
STACK = ROOT / "stacks" / "Pulumi.chat-serve.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    yamlfile._read_cached.cache_clear()  # each read below stands for a fresh process
    return tmp_path / "cache" / "compiled"


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.marshal")) if cache.exists() else []


def test_a_stored_parse_is_the_parse(cache: Path, tmp_path: Path) -> None:
    expected = parse_yaml(STACK.read_text(), STACK)
    first = read_yaml(STACK)
    assert len(entries(cache)) == 1
    yamlfile._read_cached.cache_clear()
    copy = tmp_path / "Pulumi.copy.yaml"  # the same content elsewhere: the entry is found by content
    shutil.copy(STACK, copy)
    second = read_yaml(copy)
    assert len(entries(cache)) == 1
    assert first.data == second.data == expected.data
    assert first.lines == second.lines == expected.lines
    assert list(second.lines) == list(expected.lines)  # in the parse's order, keys as tuples
    assert second.path == copy and second.line_of(("config", "gpuinfra:inference", "regions", 0)) is not None


def test_a_tampered_entry_is_ignored(cache: Path, tmp_path: Path) -> None:
    read_yaml(STACK)
    (entry,) = entries(cache)
    blob = entry.read_bytes()
    tampered = blob[:32] + blob[32:].replace(b"chat-serve", b"chat-evil!")
    assert tampered != blob  # the content edited, its seal kept
    entry.write_bytes(tampered)
    yamlfile._read_cached.cache_clear()
    assert read_yaml(STACK).data == parse_yaml(STACK.read_text(), STACK).data


def test_a_file_that_does_not_parse_is_refused_each_time(cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  a: [1, 2\n")
    for _ in range(2):
        yamlfile._read_cached.cache_clear()
        with pytest.raises(InputError) as caught:
            read_yaml(bad, "stack file")
        assert caught.value.problems[0].file == bad
    assert entries(cache) == []
