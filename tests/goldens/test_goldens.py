"""Golden renders of the node user data, the JobSet and the preview Markdown (tests/goldens/renders.py), and
proof that they change only through `make goldens` (tests/goldens/store.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from goldens.renders import GOLDENS
from goldens.store import COMMAND, MANIFEST, ROOT, check_golden, digest, read_manifest

FILES = Path(__file__).parent / "files"


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_the_render_matches_its_golden(name: str, update_goldens: bool) -> None:
    check_golden(FILES / name, GOLDENS[name](), update_goldens)


def test_every_golden_is_as_the_command_wrote_it(update_goldens: bool) -> None:
    """Each golden file has the hash `make goldens` recorded, and the manifest lists no file that is gone."""
    if update_goldens:
        pytest.skip("the command is writing them now; this checks what it wrote, on the next run")
    manifest = read_manifest()
    on_disk = {p.relative_to(ROOT).as_posix() for p in [*FILES.iterdir(), *(ROOT / "tests/report/golden").iterdir()]}
    assert set(manifest) == on_disk, f"goldens and MANIFEST.json disagree: run `{COMMAND}`"
    edited = [name for name, sha in manifest.items() if digest(ROOT / name) != sha]
    assert not edited, f"edited by hand, not regenerated: {edited}; run `{COMMAND}`"


def test_the_update_flag_rewrites_the_file_and_its_hash(tmp_path: Path) -> None:
    """The regeneration path itself: a stale golden is rewritten and its manifest entry follows."""
    golden, manifest = tmp_path / "files" / "probe.txt", tmp_path / "MANIFEST.json"
    golden.parent.mkdir()
    golden.write_text("stale\n")
    with pytest.raises(AssertionError, match=COMMAND):
        check_golden(golden, "fresh\n", update=False, manifest=manifest, root=tmp_path)
    check_golden(golden, "fresh\n", update=True, manifest=manifest, root=tmp_path)
    assert golden.read_text() == "fresh\n"
    assert json.loads(manifest.read_text()) == {"files/probe.txt": digest(golden)}
    assert MANIFEST.resolve() != manifest.resolve()
