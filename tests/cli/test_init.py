"""`gpuinfra init` for each workload, then `validate` and `preview`, in a directory that is not yet a Pulumi
project: every file it writes validates (against the JSON Schema it writes beside them, and through gpuinfra
itself) with no finding at all, and previews with exit 0; the Kubernetes stacks carry a placeholder kubeconfig
secret (as the bundled examples do) and init names the command that sets the real one before `pulumi up`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from gpuinfra.commands.init import ALIASES, WORKLOADS
from helpers import ROOT, gpuinfra
from ruamel.yaml import YAML

SECRET_NEEDED = {"training-onprem": "gpuinfra:kube-dc-east", "inference-k8s": "gpuinfra:kube-us-east-1"}
"""The stacks whose cluster is reached through a kubeconfig kept as a Pulumi secret: nothing init can know."""


def load(path: Path) -> object:
    return YAML(typ="safe").load(path.read_text())


def test_every_workload_has_its_template_and_the_short_names_resolve() -> None:
    folder = ROOT / "templates" / "init"
    stacks = [p for p in folder.glob("*.yaml.j2") if p.name != "org.yaml.j2" and not p.name.startswith("repo-")]
    assert sorted(p.name.removesuffix(".yaml.j2") for p in stacks) == sorted(WORKLOADS)
    assert set(ALIASES.values()) <= set(WORKLOADS)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_init_then_validate_clean_and_preview(workload: str, tmp_path: Path) -> None:
    name = "my-" + workload.split("-")[-1]
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

    checked = gpuinfra("validate", name, "--format", "json", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    (report,) = json.loads(checked.stdout)["stacks"]
    assert report["findings"] == [], report["findings"]  # no error, no warning, no note on a first validate

    result = gpuinfra("preview", name, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"preview {name}" in made.stdout
    key = SECRET_NEEDED.get(workload)
    if key is not None:  # previews offline on the placeholder; the real one is named for `pulumi up`
        assert load(stack)["config"][key]["secure"].startswith("v1:UExBQ0VIT0xERVI=:")  # type: ignore[index]
        assert f'before pulumi up: pulumi config set --secret {key} "$(cat kubeconfig)"' in made.stdout


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
        (["training-pcs", "llm-train"], "stacks/Pulumi.llm-train.yaml: the stack file exists"),
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
    # --force replaces only a stack file init wrote: the hand-written example stays, an init-written one goes
    forced = gpuinfra("init", "training-pcs", "llm-train", "--force", cwd=tmp_path)
    assert forced.returncode == 2 and "only a stack file `gpuinfra init` wrote" in forced.stderr, forced.stderr
    assert (tmp_path / "stacks" / "Pulumi.llm-train.yaml").read_text() == before
    assert gpuinfra("init", "training-pcs", "t9", cwd=tmp_path).returncode == 0
    forced = gpuinfra("init", "inference-ec2", "t9", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "wrote stacks/Pulumi.t9.yaml" in forced.stdout, forced.stderr
    assert "gpuinfra:inference" in (tmp_path / "stacks" / "Pulumi.t9.yaml").read_text()


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


# ---- never outside the project, never through a link (issue 47) ---------------------------------------------
def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    assert gpuinfra("init", "training-pcs", "t1", cwd=project).returncode == 0
    return project


def test_force_never_writes_through_a_symlinked_stack_file(tmp_path: Path) -> None:
    project = _project(tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    stack = project / "stacks" / "Pulumi.t2.yaml"
    stack.symlink_to(outside)
    result = gpuinfra("init", "training-pcs", "t2", "--force", cwd=project)
    assert result.returncode == 2 and "link" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert outside.read_text() == "keep me\n" and stack.is_symlink()


def test_a_dangling_link_as_the_organization_file_is_kept_not_followed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    target = tmp_path / "elsewhere" / "org.yaml"
    target.parent.mkdir()
    (project / "stacks" / "org.yaml").symlink_to(target)
    result = gpuinfra("init", "training-pcs", "t1", cwd=project)
    assert not target.exists(), "init wrote through the link"
    assert result.returncode == 2 and "Traceback" not in result.stderr  # the org file it needs cannot be read


def test_a_stacks_folder_leading_outside_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: ../escaped\n")
    result = gpuinfra("init", "training-pcs", "t1", cwd=project)
    assert result.returncode == 2 and "outside the project" in result.stderr, result.stderr
    assert not (tmp_path / "escaped").exists()


def test_a_linked_schemas_folder_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    outside = tmp_path / "outside-schemas"
    outside.mkdir()
    (outside / "stack.schema.json").write_text('{"title": "gpuinfra stack file"}')
    shutil.rmtree(project / "schemas")
    (project / "schemas").symlink_to(outside)
    result = gpuinfra("init", "training-pcs", "t3", cwd=project)
    assert result.returncode == 2 and "outside the project" in result.stderr, result.stderr
    assert (outside / "stack.schema.json").read_text() == '{"title": "gpuinfra stack file"}'


def test_a_schema_the_user_wrote_is_kept(tmp_path: Path) -> None:
    project = _project(tmp_path)
    mine = project / "schemas" / "stack.schema.json"
    mine.write_text('{"title": "my own"}')
    result = gpuinfra("init", "training-pcs", "t4", cwd=project)
    assert result.returncode == 0 and "kept  schemas/stack.schema.json" in result.stdout, result.stdout
    assert mine.read_text() == '{"title": "my own"}'
