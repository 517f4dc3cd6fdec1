"""Shared test helpers: example stacks, mutated in memory, run through the real pipeline stages."""

from __future__ import annotations

import base64
import copy
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.load import Inputs, resolve
from gpuinfra.spec import SPEC_MODELS, Organization, OrgDocument, YamlDocument, parse_stack, read_yaml
from gpuinfra.validators.checked import Checked, check
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
STACKS = ROOT / "stacks"
EXAMPLES = tuple(sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml")))
"""Every bundled example stack."""
DELETE = object()
"""Mutation value that removes the key."""

Mutations = Mapping[str, Any]


NO_DAC = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-dac_override,-dac_read_search")
"""Root without the two capabilities that let it read every folder (capabilities(7)): a mode-000 folder stops it
as it stops any user, so an unreadable-folder case asserts the same thing under root (here and in CI) as under an
ordinary user. The process stays UID 0, so everything else it touches (the venv, the test's folders) is its own."""


def without_dac() -> tuple[str, ...]:
    """The command prefix under which file modes stop this process: none for an ordinary user, NO_DAC for root;
    without setpriv (util-linux) under root the test fails in CI and skips elsewhere."""
    import os
    import shutil

    import pytest

    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("setpriv (util-linux) is needed to drop CAP_DAC_*")
    return NO_DAC


def gpuinfra(*args: str, cwd: Path = ROOT, prefix: Iterable[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run the installed script's entry point (`gpuinfra.cli:run`, pyproject.toml) in a subprocess (after
    `prefix`, e.g. without_dac())."""
    return subprocess.run(
        [*prefix, sys.executable, "-c", "from gpuinfra.cli import run; run()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def example_data(stack: str) -> dict[str, Any]:
    return copy.deepcopy(read_yaml(STACKS / f"Pulumi.{stack}.yaml").data)


def org_data() -> dict[str, Any]:
    return copy.deepcopy(read_yaml(STACKS / "org.yaml").data)


def _path(dotted: str) -> list[str | int]:
    """'regions[1].min_replicas' -> ['regions', 1, 'min_replicas']."""
    parts: list[str | int] = []
    for piece in dotted.split("."):
        name, *indexes = re.split(r"\[(\d+)\]", piece)
        if name:
            parts.append(name)
        parts.extend(int(i) for i in indexes if i)
    return parts


def apply(data: Any, mutations: Mutations) -> Any:
    for dotted, value in mutations.items():
        *head, last = _path(dotted)
        node = data
        for key in head:
            node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return data


def ample_quotas(account: str = "ml-training", region: str = "us-east-1") -> dict[str, int]:
    """Organization mutations granting every EC2 quota code generously: for tests that grow a cluster past the
    example's grants and are about something else (quota checks have their own tests)."""
    from gpuinfra.clouds import cloud

    return {f"accounts.{account}.quotas.{region}.{q.code}": 1_000_000 for q in cloud("aws").part("quota_book")().codes}


def workload_of(stack: str) -> str:
    config = example_data(stack)["config"]
    return next(w for w in SPEC_MODELS if f"gpuinfra:{w}" in config)


_ORGS = tempfile.TemporaryDirectory(prefix="gpuinfra-orgs-")
"""Mutated organization files, removed when the test process exits (the object's finalizer)."""


def inputs_for(
    stack: str, spec: Mutations | None = None, org: Mutations | None = None, config: Mutations | None = None
) -> Inputs:
    """The example `stack` with `spec` mutations (paths relative to the spec), `org` mutations and
    extra stack `config` keys."""
    data = example_data(stack)
    key = f"gpuinfra:{workload_of(stack)}"
    apply(data["config"][key], spec or {})
    data["config"].update(config or {})
    stack_doc = parse_stack(YamlDocument(path=STACKS / f"Pulumi.{stack}.yaml", data=data))
    org_path = STACKS / "org.yaml"
    org_values = apply(org_data(), org or {})
    if org:
        # The Pulumi program reads the organization file itself (as under `pulumi up`): write the mutation.
        org_path = Path(tempfile.mkdtemp(prefix="org-", dir=_ORGS.name)) / "org.yaml"
        with org_path.open("w") as fh:
            YAML().dump(org_values, fh)
    org_doc = OrgDocument(org=Organization.model_validate(org_values), doc=YamlDocument(path=org_path, data={}))
    return resolve(stack_doc, org_doc, load_catalog())


def checked(
    stack: str,
    spec: Mutations | None = None,
    org: Mutations | None = None,
    suppress: Iterable[str] = (),
    config: Mutations | None = None,
) -> Checked:
    """The stack checked as `validate` checks it: its quota needs counted with the example folder's other stacks."""
    from gpuinfra.workspace import workspace_of

    inputs = inputs_for(stack, spec, org, config)
    quotas = workspace_of(inputs.stack.path, inputs.org.path).quotas_of(inputs)
    return check(inputs, load_catalog(), suppress, quotas)


def rules_fired(result: Checked) -> set[str]:
    return {f.rule for f in result.findings}


def field_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into `node` (mappings and lists), so a fuzzing mutation can land on any field."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += field_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += field_paths(value, (*prefix, index))
    return out


def write_stack(
    tmp_path: Path, stack: str, spec: Mutations | None = None, org: Mutations | None = None, text: str | None = None
) -> Path:
    """Write a mutated example (or raw text) plus its org file into tmp_path; return the stack path."""
    from ruamel.yaml import YAML

    yaml = YAML()
    path = tmp_path / f"Pulumi.{stack}.yaml"
    if text is not None:
        path.write_text(text)
    else:
        data = example_data(stack)
        apply(data["config"][f"gpuinfra:{workload_of(stack)}"], spec or {})
        with path.open("w") as fh:
            yaml.dump(data, fh)
    with (tmp_path / "org.yaml").open("w") as fh:
        yaml.dump(apply(org_data(), org or {}), fh)
    return path


__all__ = [
    "DELETE",
    "ROOT",
    "STACKS",
    "apply",
    "checked",
    "example_data",
    "field_paths",
    "inputs_for",
    "org_data",
    "rules_fired",
    "workload_of",
    "write_stack",
]


# ---- validator cases -------------------------------------------------------------------------
from dataclasses import dataclass, field  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One validator scenario: an example stack, mutated; does `rule` fire, with what message?"""

    rule: str
    stack: str
    spec: dict[str, Any] = field(default_factory=dict)
    org: dict[str, Any] = field(default_factory=dict)
    fires: bool = True
    config: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    """Regex the finding's message must match (when it fires)."""

    @property
    def id(self) -> str:
        return f"{self.rule}-{'fails' if self.fires else 'passes'}-{self.stack}-" + ",".join(self.spec or self.org)


def run_case(case: Case) -> None:
    result = checked(case.stack, case.spec, case.org, config=case.config)
    found = [f for f in result.findings if f.rule == case.rule]
    if not case.fires:
        assert not found, f"{case.rule} fired unexpectedly: {found}"
        return
    assert found, f"{case.rule} did not fire; findings: {[(f.rule, f.message) for f in result.findings]}"
    if case.message:
        assert any(re.search(case.message, f.message) for f in found), [f.message for f in found]


# ---- graphs ------------------------------------------------------------------------------------
from functools import lru_cache  # noqa: E402

from gpuinfra.graph import Graph  # noqa: E402


def graph_for(
    stack: str, spec: Mutations | None = None, org: Mutations | None = None, config: Mutations | None = None
) -> Graph:
    """Run the example stack (mutated) through the embedded engine: the whole program, as `pulumi up` runs it
    (config -> inputs -> plan -> validators -> components)."""
    from gpuinfra.workspace.program import program_graph

    return program_graph(inputs_for(stack, spec, org, config))


@lru_cache(maxsize=8)
def example_graph(stack: str) -> Graph:
    """The unmutated example's graph, computed once per test session."""
    return graph_for(stack)


def planted_google_check(stack: str, name: str, path: tuple[Any, ...], value: Any) -> list[Any]:
    """The example's resource `name` with the value at `path` (keys and list indexes) replaced, judged by Google's
    preflight (gpuinfra.clouds.gcp.preflight.discovery.check)."""
    import copy
    import dataclasses

    from gpuinfra.clouds.gcp.preflight.discovery import check

    graph = example_graph(stack)
    resource = next(r for r in graph.resources if r.name == name)
    inputs = copy.deepcopy(resource.inputs)
    node = inputs
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return list(check(dataclasses.replace(resource, inputs=inputs), graph))


# ---- rendered bootstrap ------------------------------------------------------------------------
def cloud_config(text: str) -> dict[str, Any]:
    """The cloud-config, with each write_files entry's content as cloud-init writes it: `gz+b64` entries are
    base64-decoded then gunzipped (cloud-init cc_write_files, extract_contents), and lose their encoding key."""
    import gzip

    from ruamel.yaml import YAML

    assert text.startswith("#cloud-config\n")
    data = YAML(typ="safe", pure=True).load(text)
    assert isinstance(data, dict) and data["write_files"]
    for entry in data["write_files"]:
        if entry.get("encoding") in ("gz+b64", "gzip+base64", "gz+base64", "gzip+b64"):
            del entry["encoding"]
            entry["content"] = gzip.decompress(base64.b64decode(entry["content"])).decode()
    return data


def assert_bash_ok(script: str, tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text(script)
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def scripts(config: dict[str, Any]) -> list[str]:
    return [f["content"] for f in config["write_files"] if f["content"].startswith("#!/bin/bash")]


# ---- registration tests ------------------------------------------------------------------------
def sibling_test_modules(test_file: str) -> list[Any]:
    """The other test modules beside `test_file`, imported, to read their CASES tables."""
    import importlib.util

    here = Path(test_file)
    modules = []
    for path in sorted(here.parent.glob("test_*.py")):
        if path.name == here.name:
            continue
        spec = importlib.util.spec_from_file_location(f"cases_{path.parent.name}_{path.stem}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def committed_project(root: Path) -> Path:
    """A git repository at `root` holding the examples and a copy of the running package's files (as bench/repo.py
    makes its repository), in one commit: a base whose code is the running code, for `diff --base-ref`."""
    import shutil

    import gpuinfra
    import gpuinfra.templates

    (root / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    for path in STACKS.glob("*.yaml"):
        shutil.copy(path, root / "stacks" / path.name)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(gpuinfra.__path__[0]), root / "infra" / "gpuinfra", ignore=ignore)
    shutil.copytree(Path(gpuinfra.templates.__path__[0]), root / "templates", ignore=ignore)
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "base"], cwd=root, check=True)
    return root
