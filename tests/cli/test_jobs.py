"""`--jobs`: stacks previewed in worker processes give the same report, byte for byte, and the same exit code as
a serial run, including a stack that cannot be read (a problem, exit 2) among readable ones."""

from __future__ import annotations

from pathlib import Path

from gpuinfra.commands.preview import preview_run
from gpuinfra.report.render.json import render_json
from gpuinfra.report.render.table import render_table


def test_parallel_preview_is_identical_to_serial(tmp_path: Path) -> None:
    broken = tmp_path / "Pulumi.broken.yaml"
    broken.write_text("config:\n  gpuinfra:spec: [not, a, spec\n")
    stacks = ["chat-serve", str(broken), "model-registry"]
    serial = preview_run(stacks, jobs=1)
    parallel = preview_run(stacks, jobs=2)
    assert [s.stack for s in serial.report.stacks] == ["chat-serve", "model-registry"]  # the order given
    assert len(serial.report.problems) == 1 and serial.report.exit_code == 2
    assert render_json(parallel.report) == render_json(serial.report)
    assert render_table(parallel.report) == render_table(serial.report)
    assert parallel.report.exit_code == serial.report.exit_code
    assert parallel.snapshots.keys() == serial.snapshots.keys()
    for name, snapshot in serial.snapshots.items():
        assert parallel.snapshots[name].graph == snapshot.graph
