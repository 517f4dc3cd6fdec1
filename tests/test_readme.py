"""The README's and docs' commands work: the quickstart runs as written, as one shell script, in a temporary
copy of the project that is its own git repository (so `--base-ref main` has a `main`); every `gpuinfra` line
of the other console blocks runs and exits 0; the `make` lines name real targets; the links between pages
resolve. Files the commands read are made the way the pages say (previews by earlier commands, the usage file
and policy config from their own snippets, Pulumi documents from the fixtures); `--base-ref` commands run in a
fresh clone, where `main` and `origin/main` exist."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers import ROOT, gpuinfra

README = (ROOT / "README.md").read_text()
PAGES = {"README.md": README} | {f"docs/{p.name}": p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
TEXT = "\n".join(PAGES.values())
FIXTURES = ROOT / "tests" / "fixtures" / "pulumi"
"""Real Pulumi CLI output, byte-identical to its public sources (SOURCES.md there, with licenses)."""


def blocks(language: str, text: str = TEXT) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def commands(program: str, text: str = TEXT) -> list[str]:
    lines = [line.split("  #")[0].split(" # ")[0].strip() for b in blocks("console", text) for line in b.splitlines()]
    return [line for line in lines if line.startswith(program + " ")]


QUICKSTART = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
QUICKSTART_GPUINFRA = commands("gpuinfra", QUICKSTART)
GPUINFRA = sorted({c for c in commands("gpuinfra") if c not in QUICKSTART_GPUINFRA})


def test_the_readme_shows_the_two_commands_and_make_has_them() -> None:
    assert "make preview" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text()
    for line in commands("make"):
        assert re.search(rf"^{line.split()[1]}:", makefile, flags=re.M), line


def test_the_quickstart_fits_one_screen_and_covers_the_first_hour() -> None:
    assert len(QUICKSTART.strip().splitlines()) <= 45
    for step in (
        "pip install",
        "gpuinfra validate",
        "gpuinfra preview",
        "gpuinfra diff",
        "pulumi login",
        "pulumi stack select --create",
        "--secrets-provider",
        "pulumi config set --path",
        "pulumi up",
        "role_arn",
    ):
        assert step in QUICKSTART, step


def test_pulumi_stack_select_always_creates() -> None:
    """On a new backend `pulumi stack select NAME` fails when the stack does not exist; `-c, --create` creates
    it (pulumi.com/docs/iac/cli/commands/pulumi_stack_select)."""
    selects = commands("pulumi stack select")
    assert selects
    for line in selects:
        assert "--create" in line.split() or "-c" in line.split(), line


def test_links_between_pages_resolve() -> None:
    for name, text in PAGES.items():
        for target in re.findall(r"\]\(([^)#]+?\.md)(?:#[^)]*)?\)", text):
            if "://" not in target:
                assert (ROOT / name).parent.joinpath(target).is_file(), f"{name} links to {target}"


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
def test_command_runs(line: str, work: Path, tmp_path: Path) -> None:
    if shlex.split(line)[1] == "init":  # a new stack joins the account-wide totals the others are judged by
        prepare(tmp_path)
        work = tmp_path
    result = gpuinfra(*shlex.split(line)[1:], cwd=work)
    assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("line", [c for c in GPUINFRA if "--base-ref" in c])
def test_review_command_runs_in_a_clone(line: str, clone: Path) -> None:
    result = gpuinfra(*shlex.split(line)[1:], cwd=clone)
    assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


def fresh_copy(dest: Path) -> None:
    """The project as a new user's clone sees it: the files git tracks plus the new ones not ignored (so an
    uncommitted change is tested too), committed as `main` of a repository of its own."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git = ["git", "-c", "user.name=quickstart", "-c", "user.email=quickstart@example.invalid"]
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fresh clone"]):
        subprocess.run([*git, *step], cwd=dest, check=True, capture_output=True)


def offline_venv(project: Path, tmp: Path) -> dict[str, str]:
    """`python3` on PATH is the interpreter the tests run under, and the `.venv` the quickstart makes sees this
    environment's dependencies (a .pth file appended after its own site-packages): pip then finds every
    requirement installed and runs without an index (PIP_NO_INDEX), so the test needs no network, and the
    gpuinfra it runs is the one `pip install .` put into the fresh .venv (asserted by the caller)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    # pip first, then the .pth: ensurepip would otherwise find this environment's pip and install no script
    subprocess.run([str(bin_dir / "python3"), "-m", "venv", str(project / ".venv")], check=True, capture_output=True)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(project / ".venv")}))
    for bundled in purelib.glob("setuptools*"):  # Python 3.11's ensurepip bundles an old setuptools: use ours
        shutil.rmtree(bundled)
    deps = [p for p in sys.path if p.endswith("site-packages")]  # with the ones our own .pth files added
    (purelib / "deps.pth").write_text("\n".join(deps) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "PIP_"))}
    env |= {
        "PATH": f"{bin_dir}:{env['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "COLUMNS": "120",
    }
    return env


def test_the_quickstart_runs_as_written_in_a_fresh_copy(tmp_path: Path) -> None:
    script = blocks("console", QUICKSTART)[0]
    project = tmp_path / "gpuinfra"
    project.mkdir()
    fresh_copy(project)
    env = offline_venv(project, tmp_path)
    env |= {  # the quickstart commits in the team's new repository: a committer, as the user's git config gives
        "GIT_AUTHOR_NAME": "quickstart",
        "GIT_AUTHOR_EMAIL": "quickstart@example.invalid",
        "GIT_COMMITTER_NAME": "quickstart",
        "GIT_COMMITTER_EMAIL": "quickstart@example.invalid",
    }
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    which = subprocess.run(
        [str(project / ".venv/bin/python"), "-c", "import gpuinfra; print(gpuinfra.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert which.stdout.startswith(str(project / ".venv")), which.stdout  # the installed copy, not the source tree
    # the review of the team's branch: the bigger cluster, previewed on both sides by the installed gpuinfra
    assert "main has no gpuinfra code of its own" in result.stdout, result.stdout[-3000:]
    assert "node added" in result.stdout and "my-train" in result.stdout, result.stdout[-3000:]
    assert (tmp_path / "my-infra" / ".github" / "workflows" / "gpuinfra-review.yml").is_file()
