"""A cache can make a review faster, never greener: every entry is sealed with an HMAC under the reviewer's key
(gpuinfra.store.sealed). An entry forged with a recomputed digest (the plain SHA-256 any pull request can compute),
or sealed under another key, is ignored and the output is what an uncached run gives."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest
from gpuinfra.commands import stack_cache
from gpuinfra.commands.preview import preview_run
from gpuinfra.report.render import render
from gpuinfra.store import disk, sealed
from gpuinfra.workspace import _workspace

STACK = "llm-train"


@pytest.fixture
def reviewer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "compiled"))
    monkeypatch.setenv(sealed.KEY_ENV, "the reviewer's secret")
    sealed.secret.cache_clear()
    _workspace.cache_clear()
    stack_cache._READ.clear()
    yield tmp_path / "previews"
    sealed.secret.cache_clear()
    stack_cache._READ.clear()


def _forged(entry: Path) -> None:
    """The entry made greener and sealed as the cache used to seal: SHA-256(format, key, content)."""
    _, _, payload = entry.read_bytes().partition(b"\n")
    body = json.loads(payload)
    _greener(body)
    forged = json.dumps(body, sort_keys=True).encode()
    digest = hashlib.sha256(stack_cache.FORMAT.encode() + b"\0" + body["key"].encode() + b"\0" + forged)
    entry.write_bytes(digest.hexdigest().encode() + b"\n" + forged)


def _greener(body: dict[str, object]) -> None:
    """What a forger wants: no violation, no finding, a small bill."""
    report = body["report"]
    assert isinstance(report, dict)
    report["findings"] = []
    if report.get("policy"):
        report["policy"]["violations"] = []
    report["cost"] = None


def test_a_forged_preview_entry_changes_nothing(reviewer: Path) -> None:
    plain = render(preview_run([STACK], jobs=1).report, "json")
    assert render(preview_run([STACK], jobs=1, cache_dir=reviewer).report, "json") == plain
    assert json.loads(plain)["stacks"][0]["cost"] is not None  # so the forgery's "no cost" would show
    (entry,) = (reviewer / stack_cache.FOLDER).glob("*.json")
    _forged(entry)
    stack_cache._READ.clear()
    again = render(preview_run([STACK], jobs=1, cache_dir=reviewer).report, "json")
    assert again == plain


def test_an_entry_sealed_under_another_key_is_not_read(reviewer: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk.write("a-key", {"total": "1"})
    assert disk.read("a-key") == {"total": "1"}
    monkeypatch.setenv(sealed.KEY_ENV, "an attacker's secret")
    sealed.secret.cache_clear()
    disk.write("b-key", {"total": "0"})  # written by someone else, under their key
    monkeypatch.setenv(sealed.KEY_ENV, "the reviewer's secret")
    sealed.secret.cache_clear()
    assert disk.read("a-key") == {"total": "1"}
    assert disk.read("b-key") is None


def test_a_recomputed_plain_digest_does_not_seal(reviewer: Path) -> None:
    """The seal before this change was SHA-256(format, key, content): anyone could recompute it."""
    import marshal

    payload = marshal.dumps({"monthly_max": {}, "problem": None, "stack": "x"})
    path = disk._path("forged")
    path.parent.mkdir(parents=True, exist_ok=True)
    old = hashlib.sha256(disk.FORMAT + b"forged" + b"\0" + payload).hexdigest().encode()
    other = hmac.new(b"guessed", disk.FORMAT + b"\0forged\0" + payload, hashlib.sha256).hexdigest().encode()
    for seal in (old, other):
        path.write_bytes(seal + b"\n" + payload)
        assert disk.read("forged") is None


def test_the_key_file_is_private_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sealed.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    sealed.secret.cache_clear()
    first = sealed.secret()
    key_file = tmp_path / "config" / "gpuinfra" / "cache.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    sealed.secret.cache_clear()
    assert sealed.secret() == first and len(first) == 64
    key_file.chmod(0o644)  # readable by others: not a secret any more, so not trusted across processes
    sealed.secret.cache_clear()
    assert sealed.secret() != first
    sealed.secret.cache_clear()


def test_a_fifo_in_the_cache_is_not_read(reviewer: Path) -> None:
    import os

    path = disk._path("fifo")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert disk.read("fifo") is None
