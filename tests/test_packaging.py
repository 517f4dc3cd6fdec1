"""How gpuinfra is installed and identified: one version (the package's `__version__`, which the wheel's metadata
and `--version` carry, and the changelog names), a policy pack whose requirements install gpuinfra from the
repository the pack sits in when pip runs where Pulumi runs it, and a Makefile that refuses an unsupported
Python in one line before pip runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, gpuinfra

VERSION = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "infra/gpuinfra/__init__.py").read_text(), re.M)[1]  # type: ignore[index]


def test_version_is_printed_and_in_the_changelog() -> None:
    result = gpuinfra("--version")
    assert result.returncode == 0 and result.stdout == f"gpuinfra {VERSION}\n", result.stdout + result.stderr
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{VERSION}]" in changelog
    assert "## [Unreleased]" in changelog
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "gpuinfra.__version__"}' in pyproject


def copy_repository(dest: Path) -> None:
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    for folder in ("infra", "templates", "policies"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))


def pip_report(requirements: Path, cwd: Path, report: Path) -> subprocess.CompletedProcess[str]:
    """What `pip install -r` would install (resolved, metadata built, nothing installed, no index)."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--no-build-isolation",
         "--disable-pip-version-check", "--quiet", "--report", str(report), "-r", str(requirements)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_policy_pack_installs_gpuinfra_from_its_repository(tmp_path: Path) -> None:
    """Pulumi installs a pack's requirements with `python -m pip install -r requirements.txt` in the pack's
    directory (pulumi/pulumi@1b59498 sdk/python/toolchain/pip.go: `pipCmd.Dir = cwd`, the program directory;
    pkg/resource/plugin/analyzer_plugin.go: a pack's program directory is its PulumiPolicy.yaml folder)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    copy_repository(repo)
    pack = repo / "policies"
    result = pip_report(pack / "requirements.txt", pack, tmp_path / "report.json")
    assert result.returncode == 0, result.stderr[-3000:]
    installs = json.loads((tmp_path / "report.json").read_text())["install"]
    (gpuinfra_item,) = [i for i in installs if i["metadata"]["name"] == "gpuinfra"]
    assert gpuinfra_item["download_info"]["url"] == repo.as_uri()
    assert gpuinfra_item["metadata"]["version"] == VERSION

    # The same file read from another directory points elsewhere: the path is the working directory's, which is
    # why the pack relies on Pulumi's choice of it.
    elsewhere = pip_report(pack / "requirements.txt", repo, tmp_path / "other.json")
    assert elsewhere.returncode != 0


def supported_python() -> str:
    return getattr(sys, "_base_executable", sys.executable)


def old_python(tmp_path: Path) -> Path:
    """A Python 3.10 when the machine has one; else a stand-in that answers as 3.10 would (a version below the
    range, `-V` printing `Python 3.10.13`)."""
    for candidate in (shutil.which("python3.10"), "/root/.pyenv/versions/3.10.13/bin/python3.10"):
        if candidate and Path(candidate).is_file():
            answer = subprocess.run([candidate, "-V"], capture_output=True, text=True)
            if answer.returncode == 0 and answer.stdout.startswith("Python 3.10."):
                return Path(candidate)
    fake = tmp_path / "python3.10"
    fake.write_text('#!/bin/sh\ncase "$1" in -V) echo "Python 3.10.13";; *) exit 1;; esac\n')
    fake.chmod(0o755)
    return fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("Makefile", "pyproject.toml", "setup.py"):
        shutil.copy(ROOT / name, folder / name)
    return folder


TOP_LEVEL_MAKE = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
"""The environment of a make run by hand: under `make test` the inner make would otherwise be a sub-make (it
prints make[1] lines and inherits the outer make's flags)."""


def make_stamp(project: Path, python: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", ".venv/.installed-stamp", f"PYTHON={python}", "BIN=.venv/bin"],
        cwd=project, capture_output=True, text=True, timeout=120, env=TOP_LEVEL_MAKE,
    )  # fmt: skip


def test_make_refuses_an_old_python_in_one_line_before_pip(project: Path, tmp_path: Path) -> None:
    result = make_stamp(project, old_python(tmp_path))
    assert result.returncode != 0
    ours = [line for line in result.stderr.splitlines() if not line.startswith("make:")]
    assert ours == [
        f"gpuinfra needs Python 3.11 to 3.13, but {old_python(tmp_path)} is Python 3.10.13: "
        "run make PYTHON=python3.12 (or another 3.11-3.13)"
    ]
    assert not (project / ".venv").exists() and "pip" not in result.stdout + result.stderr


def test_make_rebuilds_a_venv_another_python_made(project: Path, tmp_path: Path) -> None:
    old = old_python(tmp_path)
    if old.parent == tmp_path:  # the stand-in: a .venv whose python answers as 3.10's does
        (project / ".venv/bin").mkdir(parents=True)
        shutil.copy(old, project / ".venv/bin/python")
    else:
        subprocess.run([str(old), "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    dry = subprocess.run(
        ["make", "-n", ".venv/.installed-stamp", f"PYTHON={supported_python()}"], cwd=project, capture_output=True,
        text=True, env=TOP_LEVEL_MAKE,
    )  # fmt: skip
    assert "rm -rf .venv" in dry.stdout
    # Run the check and rebuild lines only (pip would need the index): make's recipe up to the venv creation.
    lines = [line for line in dry.stdout.splitlines() if "pip install" not in line and "touch" not in line]
    script = "\n".join(lines).replace("\\\n", "")
    ran = subprocess.run(["sh", "-c", script], cwd=project, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.strip() == "rebuilding .venv: it was made by Python 3.10.13"
    version = subprocess.run([str(project / ".venv/bin/python"), "-V"], capture_output=True, text=True).stdout
    assert version.startswith("Python 3.1") and not version.startswith("Python 3.10"), version
