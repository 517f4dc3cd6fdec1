"""`gpuinfra init` for each workload, then `preview`, in a directory that is not yet a Pulumi project: every
file it writes validates (against the JSON Schema it writes beside them, and through gpuinfra itself), and
preview either exits 0 or names exactly what is left to fill in (the kubeconfig secret of the Kubernetes
stacks), which once set (as `pulumi config set --secret` stores it) gives a clean preview."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from helpers import ROOT, gpuinfra
from ruamel.yaml import YAML

SECRET_NEEDED = {"training-onprem": "gpuinfra:kube-dc-east", "inference-k8s": "gpuinfra:kube-us-east-1"}
"""The stacks whose cluster is reached through a kubeconfig kept as a Pulumi secret: nothing init can know."""

WORKLOADS = ["training-pcs", "training-eks", "training-onprem", "inference-ec2", "inference-k8s"]


def load(path: Path) -> object:
    return YAML(typ="safe").load(path.read_text())


@pytest.mark.parametrize("workload", WORKLOADS)
def test_init_then_preview(workload: str, tmp_path: Path) -> None:
    name = "my-" + workload.split("-")[1]
    made = gpuinfra("init", workload, name, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    stack = tmp_path / "stacks" / f"Pulumi.{name}.yaml"
    for path in (stack, tmp_path / "stacks" / "org.yaml", tmp_path / "Pulumi.yaml", tmp_path / "gpuinfra_program.py"):
        assert path.is_file(), path
        assert f"wrote {path.relative_to(tmp_path)}" in made.stdout

    # The editor's line, and the file valid under the schema it names (the one init wrote).
    for file, kind in ((stack, "stack"), (tmp_path / "stacks" / "org.yaml", "org")):
        first = file.read_text().splitlines()[0]
        assert first == f"# yaml-language-server: $schema=../schemas/{kind}.schema.json", first
        schema = json.loads((file.parent / first.split("=", 1)[1]).read_text())
        jsonschema.validate(load(file), schema)

    result = gpuinfra("preview", name, cwd=tmp_path)
    key = SECRET_NEEDED.get(workload)
    if key is None:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert f"preview {name}" in made.stdout
        return
    # Exactly one thing left: the secret, named with the command that sets it (also printed by init).
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"config key '{key}' is not set in this stack" in result.stderr
    assert f'pulumi config set --secret {key} "$(cat kubeconfig)"' in result.stderr
    assert result.stderr.count("hint:") == 1, result.stderr
    assert f"pulumi config set --secret {key}" in made.stdout
    # What `pulumi config set --secret` leaves in the stack file: a `secure:` value under the key.
    text = stack.read_text().replace("config:\n", f"config:\n  {key}:\n    secure: v1:c2FsdA==:Y2lwaGVydGV4dA==\n", 1)
    stack.write_text(text)
    again = gpuinfra("preview", name, cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]


def test_init_in_an_existing_project_uses_its_organization_file(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    org_before = (tmp_path / "stacks" / "org.yaml").read_text()
    (tmp_path / "sub").mkdir()
    made = gpuinfra("init", "inference-ec2", "edge-chat", "--dir", "sub", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "kept  stacks/org.yaml (exists)" in made.stdout
    assert (tmp_path / "stacks" / "org.yaml").read_text() == org_before
    assert not (tmp_path / "sub" / "Pulumi.yaml").exists()  # the project above was found, not a new one made
    spec = load(tmp_path / "stacks" / "Pulumi.edge-chat.yaml")["config"]["gpuinfra:inference"]  # type: ignore[index]
    assert spec["account"] == "ml-inference"  # the example organization's inference account
    assert "222222222222" in spec["regions"][0]["certificate_arn"]  # and its id
    assert gpuinfra("validate", "edge-chat", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["training-slurm", "x1"], "unknown workload 'training-slurm'"),
        (["training-pcs", "My_Train"], "stack name 'My_Train' is not a valid name"),
        (["training-pcs", "llm-train"], "exists"),
    ],
)
def test_init_refuses_with_a_reason(args: list[str], message: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    before = (tmp_path / "stacks" / "Pulumi.llm-train.yaml").read_text()
    result = gpuinfra("init", *args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "stacks" / "Pulumi.llm-train.yaml").read_text() == before
    forced = gpuinfra("init", "training-pcs", "llm-train", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "wrote stacks/Pulumi.llm-train.yaml" in forced.stdout


def test_the_program_init_writes_runs_the_installed_gpuinfra(tmp_path: Path) -> None:
    assert gpuinfra("init", "training-pcs", "t1", cwd=tmp_path).returncode == 0
    program = (tmp_path / "gpuinfra_program.py").read_text()
    compile(program, "gpuinfra_program.py", "exec")
    assert "from gpuinfra.workspace.program import main" in program
    from gpuinfra.workspace import program as real

    assert callable(real.main)
    project = load(tmp_path / "Pulumi.yaml")
    assert project == {  # the fields of Pulumi's project schema (sdk/go/common/workspace/project.json)
        "name": tmp_path.name,
        "description": project["description"],  # type: ignore[index]
        "runtime": {"name": "python", "options": {"virtualenv": ".venv"}},
        "main": "gpuinfra_program.py",
        "stackConfigDir": "stacks",
    }
