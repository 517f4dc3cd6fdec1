"""The bench's repository at scale (bench/repo.py) is what its section says it is, and refreshing one section of
RESULTS.md leaves the rest alone."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
from gpuinfra.commands import stack_cache
from gpuinfra.workspace.check import check_stack

from bench import process, repo


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("bench-repo") / "stacks"
    return folder, repo.stacks(folder, 12)


def keys(folder: Path, names: list[str]) -> dict[str, str | None]:
    with contextlib.chdir(folder):
        made = stack_cache.Keys(None, [], None, None)
        return {name: made.of(str(folder / f"Pulumi.{name}.yaml")) for name in names}


def test_the_stacks_are_the_registry_then_five_per_team_account(generated: tuple[Path, list[str]]) -> None:
    folder, names = generated
    # 12 stacks: the registry, then 11 in accounts of 5: training (team-00), inference (team-01), training (team-02)
    trains, fleets = [f"train-{i:03d}" for i in range(5)], [f"fleet-{i:03d}" for i in range(5, 10)]
    assert names == ["model-registry", *trains, *fleets, "train-010"]
    assert repo.CHANGED in names
    accounts = {name: check_stack(folder / f"Pulumi.{name}.yaml").inputs.spec.account for name in names}
    assert accounts["train-000"] == accounts["train-004"] == "team-00"
    assert accounts["fleet-005"] == accounts["fleet-009"] == "team-01"
    assert accounts["train-010"] == "team-02"
    blocked = [n for n in names if check_stack(folder / f"Pulumi.{n}.yaml").blocked]
    assert blocked == []  # every stack reaches the engine: none is a cheap stand-in


def test_changing_one_stack_invalidates_its_account_only(generated: tuple[Path, list[str]], tmp_path: Path) -> None:
    folder, names = generated
    before = keys(folder, names)
    original = (folder / f"Pulumi.{repo.CHANGED}.yaml").read_text()
    try:
        repo.change_stack(folder.parent)
        after = keys(folder, names)
    finally:
        (folder / f"Pulumi.{repo.CHANGED}.yaml").write_text(original)
    assert {n for n in names if after[n] != before[n]} == {f"fleet-{i:03d}" for i in range(5, 10)}


def test_refresh_replaces_one_section_and_keeps_the_rest(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# b\n\n## A\n\nold a\n\n## B\n\nold b\n\n## Verdict\n\nAll met.\n")
    process.refresh(results, "B", "new b", "cmd")
    text = results.read_text()
    assert "old b" not in text and "new b" in text and "old a" in text
    assert text.index("## A") < text.index("## B") < text.index("## Verdict")
    assert "Refreshed alone by `cmd`" in text
    process.refresh(results, "C", "new c", "cmd")  # absent: added before the verdict
    text = results.read_text()
    assert text.index("## B") < text.index("## C") < text.index("## Verdict") and "new b" in text


def test_a_run_records_the_peak_memory_of_its_largest_process(tmp_path: Path) -> None:
    # A child that holds 200 MiB, and a worker of its own (as --jobs has) that holds 300 MiB: wait4 reports the
    # larger, the worker's, which the review's largest process would be.
    child = (
        "import subprocess, sys\n"
        "held = bytearray(200 * 2**20)\n"
        "subprocess.run([sys.executable, '-c', 'x = bytearray(300 * 2**20)'], check=True)\n"
    )
    repo._run([sys.executable, "-c", child], tmp_path)
    assert 300 <= repo.PEAKS_MB[-1] < 400
    with pytest.raises(SystemExit, match=r"exited 3: .*boom"):
        repo._run([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"], tmp_path)
