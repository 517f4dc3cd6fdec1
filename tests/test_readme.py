"""The README's commands work: every `gpuinfra` line of its console blocks runs and exits 0, the `make`
lines name real targets. Files the commands read are made the way the README says (previews by earlier
commands, the usage file and policy config from its own snippets, Pulumi documents from the fixtures);
`--base-ref` commands run in a fresh clone, where `main` and `origin/main` exist."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, gpuinfra

README = (ROOT / "README.md").read_text()
FIXTURES = ROOT / "tests" / "fixtures" / "pulumi"
"""Real Pulumi CLI output, byte-identical to its public sources (SOURCES.md there, with licenses)."""


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def commands(program: str) -> list[str]:
    lines = [line.split("  #")[0].split(" # ")[0].strip() for block in blocks("console") for line in block.splitlines()]
    return [line for line in lines if line.startswith(program + " ")]


GPUINFRA = commands("gpuinfra")


def test_the_readme_shows_the_two_commands_and_make_has_them() -> None:
    assert "make preview" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text()
    for line in commands("make"):
        assert re.search(rf"^{line.split()[1]}:", makefile, flags=re.M), line


def prepare(work: Path) -> None:
    shutil.copytree(ROOT / "stacks", work / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", work / "Pulumi.yaml")
    usage = next(b for b in blocks("yaml") if "resource_type_default_usage" in b)
    (work / "usage.yml").write_text(usage)
    (work / "policy.json").write_text(next(b for b in blocks("json") if '"all"' in b))
    json.loads((work / "policy.json").read_text())
    shutil.copy(FIXTURES / "stratify-sample-preview-update.json", work / "preview.json")
    shutil.copy(FIXTURES / "stratify-sample-export.json", work / "deployed.json")
    for side in ("base", "head"):
        result = gpuinfra("preview", "llm-train", "--format", "json", "--out", f"{side}.json", cwd=work)
        assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    prepare(folder)
    return folder


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clone") / "gpuinfra"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True, timeout=120)
    return folder


@pytest.mark.parametrize("line", [c for c in GPUINFRA if "--base-ref" not in c])
def test_command_runs(line: str, work: Path) -> None:
    result = gpuinfra(*shlex.split(line)[1:], cwd=work)
    assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("line", [c for c in GPUINFRA if "--base-ref" in c])
def test_review_command_runs_in_a_clone(line: str, clone: Path) -> None:
    result = gpuinfra(*shlex.split(line)[1:], cwd=clone)
    assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
