"""`gpuinfra init`: a team's gpuinfra repository, and the stacks in it.

`init` alone scaffolds the repository: the Pulumi project (`Pulumi.yaml` and a program that runs the installed
gpuinfra), `stacks/org.yaml`, the policy pack (`policies/`, served by the installed package), the pull-request
review workflow, `requirements.txt` pinning this gpuinfra, `.gitignore`, a README and the editors' JSON Schemas.
`init WORKLOAD NAME` adds a stack to it (scaffolding the repository first when there is none).

Every file comes from a template in `templates/init/` whose values all validate with no warning; the values a
user must make their own are marked `yours:`. An existing file is never overwritten (the stack only with
`force`, and only a regular file init wrote); nothing is written outside the project or through a symbolic
link."""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuinfra import __version__
from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.load import PROJECT_FILE, project_dir, stacks_dir
from gpuinfra.spec import read_yaml
from gpuinfra.spec.files import read_text
from gpuinfra.spec.schema import intent_schema, org_schema, stack_schema
from gpuinfra.spec.yamlfile import MAX_BYTES
from gpuinfra.templating import renderer


@dataclass(frozen=True)
class Scaffold:
    """One kind of stack `init` writes: its template (templates/init/<name>.yaml.j2) and the purpose of the
    account it deploys into. A new workload is one row of WORKLOADS and one template."""

    purpose: str
    summary: str


WORKLOADS: dict[str, Scaffold] = {
    "training-pcs": Scaffold("training", "Slurm as an AWS PCS cluster"),
    "training-eks": Scaffold("training", "Kueue and JobSet on EKS"),
    "training-onprem": Scaffold("training", "your racks, behind an existing Kubernetes cluster"),
    "inference-ec2": Scaffold("inference", "EC2 Auto Scaling behind an ALB"),
    "inference-k8s": Scaffold("inference", "an existing Kubernetes cluster, scaled by KEDA"),
    "finetune": Scaffold("training", "LoRA/QLoRA jobs on AWS Batch"),
    "registry": Scaffold("registry", "the model registry's bucket"),
    "dataprep": Scaffold("dataprep", "a corpus through FineWeb's stages with datatrove on AWS PCS CPU workers"),
}
"""The scaffold name and what it deploys (each has templates/init/<name>.yaml.j2)."""

ALIASES = {"training": "training-pcs", "inference": "inference-ec2"}
"""Short names for the most common scaffold of a workload."""

NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]\Z")
"""The spec's `name` pattern (spec/base.py `Name`): the stack name becomes the spec's name."""

DEFAULT_ACCOUNTS = {
    "training": "ml-training",
    "inference": "ml-inference",
    "registry": "ml-registry",
    "dataprep": "ml-dataprep",
}
DEFAULT_IDS = {
    "training": "111111111111",
    "inference": "222222222222",
    "registry": "333333333333",
    "dataprep": "444444444444",
}
"""The accounts of the organization skeleton (templates/init/org.yaml.j2) and their ids."""

PROGRAM_TEMPLATE = '''\
"""The Pulumi program (Pulumi.yaml `main`): gpuinfra's, from the installed package."""

from gpuinfra.workspace.program import main

main()
'''

PROJECT_TEMPLATE = """\
name: {name}
description: GPU infrastructure compiled by gpuinfra (stacks/Pulumi.<stack>.yaml).
runtime:
  name: python
  options:
    virtualenv: .venv      # python3 -m venv .venv && .venv/bin/pip install -r requirements.txt
main: gpuinfra_program.py
stackConfigDir: stacks
"""

REPOSITORY = {
    ".github/workflows/gpuinfra-review.yml": "repo-workflow.yaml.j2",
    "policies/PulumiPolicy.yaml": "repo-policy-pack.yaml.j2",
    "policies/__main__.py": "repo-policy-main.py.j2",
}
"""The repository's YAML and Python files beside the project and stacks, each from its template in
templates/init/ (under the templates' quoting rules: tests/test_templating.py); the plain text files are TEXTS."""

TEXTS = {
    ".gitignore": """\
# Written by `gpuinfra init`.
.venv/
__pycache__/
.gpuinfra-cache/
review.md
review.json
""",
    "requirements.txt": """\
# Written by `gpuinfra init`: the gpuinfra this repository is reviewed and deployed with. `gpuinfra diff
# --base-ref` shows a change of this pin in the review; `--base-code pinned` previews the base with its pin.
gpuinfra=={version}
""",
    "policies/requirements.txt": """\
# Written by `gpuinfra init`: what Pulumi installs when it makes the pack's virtualenv itself (PulumiPolicy.yaml
# names ../.venv, where requirements.txt at the top already installed these).
gpuinfra=={version}
pulumi-policy>=1.21,<2
""",
    "README.md": """\
# {project}

GPU infrastructure as gpuinfra stacks (written by `gpuinfra init`): each `stacks/Pulumi.<stack>.yaml` holds one
training cluster, inference fleet, fine-tuning queue or model registry, checked against the accounts, quotas and
budgets of `stacks/org.yaml`.

```console
python3 -m venv .venv && .venv/bin/pip install -r requirements.txt   # the gpuinfra this repository pins
.venv/bin/gpuinfra preview                   # every stack: resources, policies, cost
.venv/bin/gpuinfra diff --base-ref main      # what your branch changes against main (the pull-request comment)
```

Add a stack with `gpuinfra init training my-train` (or `inference`, `finetune`, `registry`); deploy with
`pulumi up --policy-pack policies` (gpuinfra's docs/deploy.md). `.github/workflows/gpuinfra-review.yml` posts the
review on every pull request.
""",
}
"""Plain text files of the repository; `{version}` and `{project}` are filled in."""

render = renderer("init")


@dataclass
class InitResult:
    """What `init` wrote, what it left alone, and what to run next."""

    stack: Path | None
    """The stack file written (None when init scaffolded only the repository)."""
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def init_repository(directory: Path) -> InitResult:
    """Scaffold a team's repository in `directory` (or complete the Pulumi project at or above it): every file
    that is missing is written, none is replaced."""
    result = InitResult(stack=None)
    project = project_dir(directory) or new_project(directory, result)
    scaffold_repository(project, result)
    result.next_steps = [
        "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt",
        "gpuinfra init training my-train",
        "gpuinfra preview",
        "gpuinfra diff --base-ref main",
    ]
    return result


def init_stack(workload: str, name: str, directory: Path, force: bool = False) -> InitResult:
    """Write `Pulumi.<name>.yaml` for `workload` into the Pulumi project at or above `directory` (a new
    repository in `directory` when there is none), with whatever the stack needs that is missing."""
    workload = check_arguments(workload, name)
    result = InitResult(stack=None)
    project = project_dir(directory)
    if project is None:
        project = new_project(directory, result)
        scaffold_repository(project, result)
    stacks = stacks_dir(project)
    stack = result.stack = stacks / f"Pulumi.{name}.yaml"
    check_replaceable(stack, project, force)
    org_path = stacks / "org.yaml"
    write_new(org_path, render("org.yaml.j2", schema_path=schema_path(project, org_path, "org")), result, project)
    write_schemas(project, result)
    context = stack_context(workload, name, org_path)
    text = render(f"{workload}.yaml.j2", schema_path=schema_path(project, stack, "stack"), **context)
    write(stack, text, result, project)
    result.next_steps = next_steps(workload, name, context)
    return result


def check_arguments(workload: str, name: str) -> str:
    """The scaffold's name (an alias resolved), once the workload and the stack name are known to be good."""
    workload = ALIASES.get(workload, workload)
    if workload not in WORKLOADS:
        raise InputError.single(
            f"unknown workload {workload!r}", hint=f"choose one of: {', '.join([*ALIASES, *WORKLOADS])}"
        )
    if not NAME.match(name):
        raise InputError.single(
            f"stack name {name!r} is not a valid name",
            hint="lower-case letters, digits and dashes, 2-32 characters, starting with a letter (e.g. llm-train)",
        )
    return workload


def new_project(directory: Path, result: InitResult) -> Path:
    """No Pulumi.yaml at or above `directory`: make `directory` a project whose program is the installed
    gpuinfra's (Pulumi's Python host runs `main` with runpy, so a two-line file suffices)."""
    if directory.exists() and not directory.is_dir():
        raise InputError.single(
            "--dir names a file, not a folder", file=directory, hint="give a folder (it is made if missing)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.single(
            f"cannot make the project folder: {exc.strerror or type(exc).__name__}",
            file=directory,
            hint="give a folder you can write, whose parents are folders",
        ) from None
    write_new(directory / PROJECT_FILE, PROJECT_TEMPLATE.format(name=project_name(directory)), result, directory)
    write_new(directory / "gpuinfra_program.py", PROGRAM_TEMPLATE, result, directory)
    return directory


def project_name(directory: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", directory.resolve().name) or "gpuinfra"


def scaffold_repository(project: Path, result: InitResult) -> None:
    """The organization file, the schemas and the REPOSITORY files the project lacks."""
    org_path = stacks_dir(project) / "org.yaml"
    write_new(org_path, render("org.yaml.j2", schema_path=schema_path(project, org_path, "org")), result, project)
    write_schemas(project, result)
    values = {"version": __version__, "project": project_name(project)}
    for relative, template in REPOSITORY.items():
        write_new(project / relative, render(template, **values), result, project)
    for relative, text in TEXTS.items():
        write_new(project / relative, text.format(**values), result, project)


def write_schemas(project: Path, result: InitResult) -> None:
    """The schemas the files' `# yaml-language-server` lines name, regenerated from this gpuinfra."""
    folder = project / "schemas"
    for kind, data in (("stack", stack_schema()), ("org", org_schema()), ("intent", intent_schema())):
        path = folder / f"{kind}.schema.json"
        if os.path.lexists(path) and not _own_schema(path):
            result.kept.append(path)  # the user's own file (or a link): never replaced
            continue
        write(path, json.dumps(data, indent=2, sort_keys=True) + "\n", result, project)


def schema_path(project: Path, file: Path, kind: str) -> str:
    """The schema's path from `file`, for the comment YAML editors (the yaml-language-server) read to validate and
    complete the file (`# yaml-language-server: $schema=<path>`, templates/init/)."""
    relative = os.path.relpath(project / "schemas" / f"{kind}.schema.json", file.parent)
    return Path(relative).as_posix()


def stack_context(workload: str, name: str, org_path: Path) -> dict[str, Any]:
    """The account (the organization file's first of the workload's purpose), its id and the on-premises site."""
    org = read_yaml(org_path, "organization file").data
    accounts = org.get("accounts") if isinstance(org, dict) else None
    purpose = WORKLOADS[workload].purpose
    account, account_id = DEFAULT_ACCOUNTS[purpose], DEFAULT_IDS[purpose]
    if isinstance(accounts, dict):
        for key, value in accounts.items():
            if isinstance(value, dict) and value.get("purpose") == purpose:
                account, account_id = str(key), str(value.get("id", account_id))
                break
    sites = org.get("onprem_sites") if isinstance(org, dict) else None
    site = next(iter(sites), "dc-east") if isinstance(sites, dict) and sites else "dc-east"
    placeholder = base64.b64encode(f"PLACEHOLDER--kubeconfig-{site}".encode()).decode()
    return {
        "stack_name": name,
        "training_account": purpose_account(accounts, "training"),
        "account": account,
        "account_id": account_id,
        "site": site,
        "kube_placeholder": f"v1:UExBQ0VIT0xERVI=:{placeholder}",  # base64 of PLACEHOLDER: no passphrase opens it
        "vllm": load_catalog().engine("vllm"),  # an inference stack's image and digest at the catalog's pin
    }


def purpose_account(accounts: Any, purpose: str) -> str:
    """The organization file's first account of `purpose` (the skeleton's when it names none): a dataprep stack's
    token shards are read by the training account."""
    if isinstance(accounts, dict):
        for key, value in accounts.items():
            if isinstance(value, dict) and value.get("purpose") == purpose:
                return str(key)
    return DEFAULT_ACCOUNTS[purpose]


def next_steps(workload: str, name: str, context: dict[str, Any]) -> list[str]:
    steps = [f"gpuinfra validate {name}", f"gpuinfra preview {name}"]
    if workload == "training-onprem":
        key = f"gpuinfra:kube-{context['site']}"
        steps.append(f'before pulumi up: pulumi config set --secret {key} "$(cat kubeconfig)"')
    if workload == "inference-k8s":
        steps.append('before pulumi up: pulumi config set --secret gpuinfra:kube-us-east-1 "$(cat kubeconfig)"')
    return steps


MARKER = "`gpuinfra init`"
"""Every file init writes from a template says it was "written by `gpuinfra init`" in its first lines: what
`--force` looks for before it replaces a stack file."""


def check_replaceable(path: Path, project: Path, force: bool) -> None:
    """A stack file may be replaced only with `force`, and only a regular file (not a link) that init wrote."""
    inside(path, project)
    if not os.path.lexists(path):
        return
    if not force:
        raise InputError.single(
            "the stack file exists", file=shown(path), hint="give another name, or --force to replace it"
        )
    if path.is_symlink() or not path.is_file():
        raise InputError.single(
            "--force replaces only a regular file: this is a link or not a file",
            file=path,
            hint="remove it yourself if it should go, or give another name",
        )
    try:
        head = "".join(read_text(path, "the stack file", MAX_BYTES, "").splitlines()[:6]).replace("# ", "")
    except InputError:
        head = ""
    if MARKER not in head:
        raise InputError.single(
            f"--force replaces only a stack file `gpuinfra init` wrote; this one does not say {MARKER} wrote it",
            file=path,
            hint="give another name, or move the file away first",
        )


def inside(path: Path, project: Path) -> None:
    """Refuse a target whose folder resolves outside the project (a linked stacks/ or schemas/ folder, a
    stackConfigDir leading out) or that is itself a symbolic link: init never writes through one."""
    try:
        folder = path.parent.resolve()
        folder.relative_to(project.resolve())
    except ValueError:
        raise InputError.single(
            f"{path.parent} leads outside the project ({folder})",
            file=path,
            hint=f"init writes only inside the project {project}: make the folder a real one inside it",
        ) from None
    except (OSError, RuntimeError) as exc:
        raise InputError.single(f"cannot resolve {path.parent}: {exc}", file=path, hint="check the folder") from None
    if path.is_symlink():
        raise InputError.single(
            f"{path} is a symbolic link: init never writes through one", file=path, hint="remove the link first"
        )


def shown(path: Path) -> Path:
    """`path` as the user would write it from the working directory (no absolute path in a message)."""
    return Path(os.path.relpath(path))


def _own_schema(path: Path) -> bool:
    """A schema file init wrote before (a regular file whose title is gpuinfra's): safe to regenerate."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        data = json.loads(read_text(path, "the schema", 64 * MAX_BYTES, ""))
    except (InputError, ValueError):
        return False
    return isinstance(data, dict) and str(data.get("title", "")).startswith("gpuinfra ")


def write_new(path: Path, text: str, result: InitResult, project: Path) -> None:
    if os.path.lexists(path):  # lexists: a dangling link is kept, never written through
        result.kept.append(path)
    else:
        write(path, text, result, project)


def _umask() -> int:
    """The process's umask (read by setting it, then put back): what a file made with open() gets masked by."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write(path: Path, text: str, result: InitResult, project: Path) -> None:
    """Write `path` inside `project`, atomically (a temporary file beside it, renamed over it: a rename replaces
    a name, it never follows a link there)."""
    inside(path, project)  # before mkdir too: a folder leading out of the project is never made
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        inside(path, project)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would leave teammates unable to read it
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError.single(
            f"cannot write {path}: {exc.strerror or type(exc).__name__}",
            file=path,
            hint="run init in a writable directory",
        ) from None
    result.written.append(path)


__all__ = ["ALIASES", "WORKLOADS", "InitResult", "Scaffold", "init_repository", "init_stack"]
