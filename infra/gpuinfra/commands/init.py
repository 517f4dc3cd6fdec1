"""`gpuinfra init`: a new stack file for one workload and, where missing, the organization file, the editor's
JSON Schemas and (outside a Pulumi project) the project file with a program that runs the installed gpuinfra.

Every file comes from a template in `templates/init/` whose values all validate; the values a user must make
their own are marked `yours:`. An existing file is never overwritten (the stack only with `force`)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuinfra.errors import InputError
from gpuinfra.load import PROJECT_FILE, project_dir, stacks_dir
from gpuinfra.spec import read_yaml
from gpuinfra.spec.schema import org_schema, stack_schema
from gpuinfra.templating import renderer

WORKLOADS: dict[str, str] = {
    "training-pcs": "training",
    "training-eks": "training",
    "training-onprem": "training",
    "inference-ec2": "inference",
    "inference-k8s": "inference",
}
"""The scaffold name and the account purpose it deploys into."""

NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
"""The spec's `name` pattern (spec/base.py `Name`): the stack name becomes the spec's name."""

DEFAULT_ACCOUNTS = {"training": "ml-training", "inference": "ml-inference"}
"""The accounts of the organization skeleton (templates/init/org.yaml.j2)."""

PROJECT_TEMPLATE = """\
name: {name}
description: GPU infrastructure compiled by gpuinfra (stacks/Pulumi.<stack>.yaml).
runtime:
  name: python
  options:
    virtualenv: .venv      # a virtualenv with gpuinfra installed: python3 -m venv .venv && .venv/bin/pip install ...
main: gpuinfra_program.py
stackConfigDir: stacks
"""

PROGRAM_TEMPLATE = '''\
"""The Pulumi program (Pulumi.yaml `main`): gpuinfra's, from the installed package."""

from gpuinfra.workspace.program import main

main()
'''

render = renderer("init")


@dataclass
class InitResult:
    """What `init` wrote, what it left alone, and what to run next."""

    stack: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def init_stack(workload: str, name: str, directory: Path, force: bool = False) -> InitResult:
    """Write `Pulumi.<name>.yaml` for `workload` into the Pulumi project at or above `directory` (a new project
    in `directory` when there is none), with whatever the stack needs that is missing."""
    check_arguments(workload, name)
    result = InitResult(stack=Path())
    project = project_dir(directory) or new_project(directory, result)
    stacks = stacks_dir(project)
    result.stack = stacks / f"Pulumi.{name}.yaml"
    if result.stack.exists() and not force:
        raise InputError.single(
            f"stack file {result.stack} exists", file=result.stack, hint="give another name, or --force to replace it"
        )
    org_path = stacks / "org.yaml"
    write_new(org_path, render("org.yaml.j2", schema_path=schema_path(project, org_path, "org")), result)
    write_schemas(project, result)
    context = stack_context(workload, name, org_path)
    text = render(f"{workload}.yaml.j2", schema_path=schema_path(project, result.stack, "stack"), **context)
    write(result.stack, text, result)
    result.next_steps = next_steps(workload, name, context)
    return result


def check_arguments(workload: str, name: str) -> None:
    if workload not in WORKLOADS:
        raise InputError.single(f"unknown workload {workload!r}", hint=f"choose one of: {', '.join(WORKLOADS)}")
    if not NAME.match(name):
        raise InputError.single(
            f"stack name {name!r} is not a valid name",
            hint="lower-case letters, digits and dashes, 2-32 characters, starting with a letter (e.g. llm-train)",
        )


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
    project_name = re.sub(r"[^A-Za-z0-9_.-]", "-", directory.resolve().name) or "gpuinfra"
    write_new(directory / PROJECT_FILE, PROJECT_TEMPLATE.format(name=project_name), result)
    write_new(directory / "gpuinfra_program.py", PROGRAM_TEMPLATE, result)
    (directory / "stacks").mkdir(exist_ok=True)
    return directory


def write_schemas(project: Path, result: InitResult) -> None:
    """The schemas the files' `# yaml-language-server` lines name, regenerated from this gpuinfra."""
    folder = project / "schemas"
    folder.mkdir(exist_ok=True)
    for kind, data in (("stack", stack_schema()), ("org", org_schema())):
        write(folder / f"{kind}.schema.json", json.dumps(data, indent=2, sort_keys=True) + "\n", result)


def schema_path(project: Path, file: Path, kind: str) -> str:
    """The schema's path from `file`, for the comment YAML editors (the yaml-language-server) read to validate and
    complete the file (`# yaml-language-server: $schema=<path>`, templates/init/)."""
    relative = os.path.relpath(project / "schemas" / f"{kind}.schema.json", file.parent)
    return Path(relative).as_posix()


def stack_context(workload: str, name: str, org_path: Path) -> dict[str, Any]:
    """The account (the organization file's first of the workload's purpose), its id and the on-premises site."""
    org = read_yaml(org_path, "organization file").data
    accounts = org.get("accounts") if isinstance(org, dict) else None
    purpose = WORKLOADS[workload]
    account, account_id = DEFAULT_ACCOUNTS[purpose], "111111111111"
    if isinstance(accounts, dict):
        for key, value in accounts.items():
            if isinstance(value, dict) and value.get("purpose") == purpose:
                account, account_id = str(key), str(value.get("id", account_id))
                break
    sites = org.get("onprem_sites") if isinstance(org, dict) else None
    site = next(iter(sites), "dc-east") if isinstance(sites, dict) and sites else "dc-east"
    return {"stack_name": name, "account": account, "account_id": account_id, "site": site}


def next_steps(workload: str, name: str, context: dict[str, Any]) -> list[str]:
    steps = []
    if workload == "training-onprem":
        steps.append(f'pulumi config set --secret gpuinfra:kube-{context["site"]} "$(cat kubeconfig)"')
    if workload == "inference-k8s":
        steps.append('pulumi config set --secret gpuinfra:kube-us-east-1 "$(cat kubeconfig)"')
    return [*steps, f"gpuinfra preview {name}"]


def write_new(path: Path, text: str, result: InitResult) -> None:
    if path.exists():
        result.kept.append(path)
    else:
        write(path, text, result)


def write(path: Path, text: str, result: InitResult) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError.single(
            f"cannot write {path}: {exc.strerror or type(exc).__name__}",
            file=path,
            hint="run init in a writable directory",
        ) from None
    result.written.append(path)


__all__ = ["WORKLOADS", "InitResult", "init_stack"]
