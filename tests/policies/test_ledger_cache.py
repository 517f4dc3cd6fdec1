"""The policy ledger's totals of the other stacks, kept across processes by content: read back equal to what the
engine built, and built again when the stack file, the organization file or the cache entry changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gpuinfra.plan.account import file_stamp
from gpuinfra.policy.rules import ledger
from gpuinfra.store import disk as compiled

ROOT = Path(__file__).resolve().parents[2]


def _held(path: Path, org: Path) -> ledger.Held:
    return ledger._held(path, *file_stamp(path), org, *file_stamp(org))


@pytest.fixture
def stacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "stacks"
    folder.mkdir()
    for name in ("org.yaml", "Pulumi.chat-serve.yaml"):
        shutil.copy(ROOT / "stacks" / name, folder / name)
    ledger._held.cache_clear()
    ledger._SEEDED.clear()  # totals an earlier preview in this process handed over
    yield folder
    ledger._held.cache_clear()


def test_a_stack_built_once_is_read_back_equal_and_rebuilt_when_anything_changes(
    stacks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, org = stacks / "Pulumi.chat-serve.yaml", stacks / "org.yaml"
    built = _held(path, org)
    assert built.problem is None and built.monthly_max  # a real total, not an empty one

    builds: list[Path] = []
    real = ledger._built

    def counted(p: Path, o: Path) -> ledger.Held:
        builds.append(p)
        return real(p, o)

    monkeypatch.setattr(ledger, "_built", counted)
    ledger._held.cache_clear()
    assert _held(path, org) == built  # from the disk: Decimals and quota keys come back exactly
    assert builds == []

    key = ledger._content_key(path, org)
    assert key is not None
    entry = compiled._path(key)  # the ledger's entry (the stack files' parses are kept beside it)
    assert entry.is_file()
    entry.write_bytes(entry.read_bytes()[:-1] + b"\x00")  # tampered: ignored, built again
    ledger._held.cache_clear()
    assert _held(path, org) == built
    assert len(builds) == 1

    path.write_text(path.read_text() + "\n# a comment changes the content\n")
    ledger._held.cache_clear()
    _held(path, org)
    assert len(builds) == 2

    org.write_text(org.read_text() + "\n# so does this\n")
    ledger._held.cache_clear()
    _held(path, org)
    assert len(builds) == 3
