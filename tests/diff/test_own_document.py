"""The base revision's own document (`load_document(own=True)`, what `diff --base-ref` reads back from the base's
subprocess) reads as the same report as through the bounded reader, and a document orjson refuses is read by the
bounded reader still (refused there when it must be)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.report.render import render
from gpuinfra.review.documents import load_document

ROOT = Path(__file__).resolve().parents[2]


def test_own_reads_the_same_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuinfra.commands.preview import preview_run

    monkeypatch.chdir(ROOT)
    out = tmp_path / "base.json"
    out.write_text(render(preview_run(["model-registry"]).report, "json"))
    assert load_document(out, own=True).data == load_document(out).data


def test_what_orjson_refuses_goes_through_the_bounded_reader(tmp_path: Path) -> None:
    big = tmp_path / "big.json"  # 25 digits: beyond orjson's 64-bit integers, within the bounded reader's 30
    big.write_text('{"version": 1, "command": "preview", "stacks": [], "extra": 1234567890123456789012345}')
    assert load_document(big, own=True).data == load_document(big).data
    nan = tmp_path / "nan.json"  # RFC 8259 has no NaN: refused by both
    nan.write_text('{"version": 1, "command": "preview", "stacks": [], "extra": NaN}')
    with pytest.raises(InputError):
        load_document(nan, own=True)
