"""The project as it ships: a wheel built from the source, installed into a fresh virtualenv, previews every
example stack and renders Markdown from a directory that is only a Pulumi project (Pulumi.yaml and stacks/),
so nothing finds its templates, catalog or stacks through the source tree's layout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from helpers import EXAMPLES, ROOT


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_wheel_in_a_fresh_venv_previews_every_example(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("infra", "templates"):  # the source root and the top-level templates (package-dir mapped)
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path / "dist", source
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("gpuinfra-*.whl")

    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=False)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(fresh), "platbase": str(fresh)}))
    # The dependencies come from this test's environment, appended after the fresh site-packages; the wheel
    # itself is unpacked by pip into the fresh one, so `gpuinfra` is the wheel's (asserted below).
    deps = [p for p in sys.path if p.endswith("site-packages")]  # a venv may reach its deps through a .pth
    (purelib / "deps.pth").write_text("\n".join(deps) + "\n")
    python = fresh / "bin" / "python"
    installed = run(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", purelib, wheel)
    assert installed.returncode == 0, installed.stderr

    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", project / "stacks")
    where = run(python, "-c", "import gpuinfra.templates as t; print(t.__file__)", cwd=project)
    assert where.stdout.strip().startswith(str(purelib / "gpuinfra" / "templates")), where.stdout + where.stderr
    assert sorted({p.parent.name for p in (purelib / "gpuinfra" / "templates").glob("*/*.j2")}) == [
        "dataprep",
        "finetune",
        "inference",
        "init",
        "kubernetes",
        "registry",
        "report",
        "training",
    ]

    cli = ("-c", "from gpuinfra.cli import run; run()")
    preview = run(python, *cli, "preview", *EXAMPLES, "-f", "markdown", cwd=project)
    assert preview.returncode == 0, preview.stderr[-2000:]
    for stack in EXAMPLES:
        assert f"## {stack}" in preview.stdout, stack
    assert "pulumi-program" not in preview.stdout and "TemplateNotFound" not in preview.stdout

    # pipx-style: an empty directory, no source tree and no project; init makes one, preview runs it.
    empty = tmp_path / "empty"
    empty.mkdir()
    made = run(python, *cli, "init", "inference-ec2", "my-chat", cwd=empty)
    assert made.returncode == 0, made.stderr
    mine = run(python, *cli, "preview", "my-chat", cwd=empty)
    assert mine.returncode == 0, mine.stdout[-2000:] + mine.stderr[-2000:]
    assert run(python, *cli, "--version", cwd=empty).stdout.startswith(f"gpuinfra {wheel.name.split('-')[1]}\n")
