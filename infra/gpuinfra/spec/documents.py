"""Stack files and the organization file as documents: the typed model plus where each field sits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from gpuinfra.errors import FieldPath, InputError
from gpuinfra.spec.dataprep import DataprepSpec
from gpuinfra.spec.finetune import FinetuneSpec
from gpuinfra.spec.inference import InferenceSpec
from gpuinfra.spec.org import Organization
from gpuinfra.spec.problems import did_you_mean, shown, validation_problems
from gpuinfra.spec.registry import RegistrySpec
from gpuinfra.spec.target import unknown_cloud, workload_model
from gpuinfra.spec.training import TrainingSpec
from gpuinfra.spec.yamlfile import YamlDocument, read_yaml

Workload = Literal["training", "inference", "registry", "finetune", "dataprep"]
WorkloadSpec = TrainingSpec | InferenceSpec | RegistrySpec | FinetuneSpec | DataprepSpec
SPEC_MODELS: dict[str, type[BaseModel]] = {
    "training": TrainingSpec,
    "inference": InferenceSpec,
    "registry": RegistrySpec,
    "finetune": FinetuneSpec,
    "dataprep": DataprepSpec,
}
NAMESPACE = "gpuinfra"
ORG_KEY = f"{NAMESPACE}:org"
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
_STACK_FILE = re.compile(r"^Pulumi\.(?P<stack>[A-Za-z0-9_.-]+)\.ya?ml\Z")


@dataclass(frozen=True)
class StackDocument:
    """A parsed stack file: its spec and the rest of its Pulumi config."""

    name: str
    path: Path
    workload: Workload
    spec: WorkloadSpec
    config: dict[str, Any]
    """Every config key of the stack file, as Pulumi would see it (secrets stay encrypted)."""
    secret_keys: frozenset[str]
    doc: YamlDocument

    @property
    def spec_key(self) -> str:
        return f"{NAMESPACE}:{self.workload}"

    @property
    def spec_prefix(self) -> FieldPath:
        """Where the spec sits in the file, to prefix field paths for messages."""
        return ("config", self.spec_key)


@dataclass(frozen=True)
class OrgDocument:
    org: Organization
    doc: YamlDocument

    @property
    def path(self) -> Path:
        return self.doc.path


def stack_name(path: Path) -> str:
    match = _STACK_FILE.match(path.name)
    return match.group("stack") if match else path.stem


def read_stack(path: Path) -> StackDocument:
    """Parse a stack file; every shape error is reported at once with file, line and field path."""
    doc = read_yaml(path, "stack file")
    return parse_stack(doc)


def parse_stack(doc: YamlDocument) -> StackDocument:
    if not isinstance(doc.data, dict):
        raise InputError([doc.problem("a stack file must be a mapping with a 'config' key", hint="add config:")])
    unknown = [k for k in doc.data if k not in STACK_FILE_KEYS]
    if unknown:
        raise InputError(
            [
                doc.problem(
                    f"unknown top-level key {shown(k)} in a Pulumi stack file",
                    (k,),
                    did_you_mean(k, STACK_FILE_KEYS) or f"a stack file holds {', '.join(STACK_FILE_KEYS)}",
                )
                for k in unknown
            ]
        )
    config = doc.data.get("config")
    if not isinstance(config, dict):
        raise InputError(
            [
                doc.problem(
                    "'config' must be a mapping of Pulumi config keys",
                    ("config",),
                    "write config: followed by indented key: value lines",
                )
            ]
        )
    present = [w for w in SPEC_MODELS if f"{NAMESPACE}:{w}" in config]
    problems = []
    for key in config:
        if not isinstance(key, str) or not key.startswith(f"{NAMESPACE}:") or key == ORG_KEY:
            continue
        short = key.split(":", 1)[1]
        if short not in SPEC_MODELS and did_you_mean(short, SPEC_MODELS):
            problems.append(
                doc.problem(f"unknown gpuinfra key {key!r}", ("config", key), did_you_mean(short, SPEC_MODELS))
            )
    if problems:
        raise InputError(problems)
    if len(present) != 1:
        keys = ", ".join(f"{NAMESPACE}:{w}" for w in SPEC_MODELS)
        found = ", ".join(f"{NAMESPACE}:{w}" for w in present) or "none"
        raise InputError(
            [
                doc.problem(
                    f"a stack holds exactly one of {keys}; found {found}",
                    ("config",),
                    "keep one workload per stack file" if present else f"add one of {keys} under config",
                )
            ]
        )
    workload: Workload = present[0]  # type: ignore[assignment]
    prefix: FieldPath = ("config", f"{NAMESPACE}:{workload}")
    raw = config[f"{NAMESPACE}:{workload}"]
    cloud = raw.get("cloud") if isinstance(raw, dict) else None
    wrong = unknown_cloud(workload, cloud)
    if wrong:
        raise InputError([doc.problem(wrong, (*prefix, "cloud"), "name a cloud gpuinfra builds, or remove cloud")])
    model = workload_model(workload, cloud) or SPEC_MODELS[workload]
    if not isinstance(raw, dict):
        raise InputError(
            [
                doc.problem(
                    f"{NAMESPACE}:{workload} must be a mapping of the spec's fields",
                    prefix,
                    f"see `gpuinfra schema` for the fields of {NAMESPACE}:{workload}",
                )
            ]
        )
    try:
        spec = model.model_validate(raw)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, model, doc, prefix)) from None
    secrets = frozenset(k for k, v in config.items() if isinstance(v, dict) and set(v) == {"secure"})
    return StackDocument(
        name=stack_name(doc.path),
        path=doc.path,
        workload=workload,
        spec=spec,  # type: ignore[arg-type]
        config=config,
        secret_keys=secrets,
        doc=doc,
    )


def read_org(path: Path) -> OrgDocument:
    """Parse the organization file."""
    doc = read_yaml(path, "organization file")
    if not isinstance(doc.data, dict):
        raise InputError(
            [doc.problem("the organization file must be a mapping with 'accounts'", hint="see `gpuinfra schema org`")]
        )
    try:
        org = Organization.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, Organization, doc)) from None
    return OrgDocument(org=org, doc=doc)


__all__ = [
    "NAMESPACE",
    "ORG_KEY",
    "SPEC_MODELS",
    "OrgDocument",
    "StackDocument",
    "Workload",
    "WorkloadSpec",
    "parse_stack",
    "read_org",
    "read_stack",
    "stack_name",
]
