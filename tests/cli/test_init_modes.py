"""`gpuinfra init` writes files as any editor would: with the mode the user's umask gives (0644 under umask 022),
not the 0600 of the temporary file it renames into place, so a teammate on the same machine, a container running
as another user, or a CI checkout copied with its modes can read the repository."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path


def test_init_writes_files_with_the_umasks_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; os.umask(0o022); from gpuinfra.cli import run; run()", "init"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"Pulumi.yaml", "org.yaml", "__main__.py", "gpuinfra-review.yml"} <= {p.name for p in written}
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in written}
    assert set(modes.values()) == {0o644}, modes
