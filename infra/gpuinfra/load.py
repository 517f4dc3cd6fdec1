"""Everything a run needs from the user's files: the stack, the organization, and the references
between them (accounts, instance types, regions, sites) checked against the catalog.

A broken reference is an input error (exit 2): nothing downstream can plan without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.errors import FieldPath, InputError, Problem
from gpuinfra.spec import (
    NAMESPACE,
    ORG_KEY,
    SPEC_MODELS,
    Account,
    DataprepSpec,
    FinetuneSpec,
    InferenceSpec,
    OrgDocument,
    RegistrySpec,
    StackDocument,
    TrainingSpec,
    Workload,
    WorkloadSpec,
    YamlDocument,
    did_you_mean,
    parse_stack,
    read_org,
    read_stack,
    read_yaml,
)

PROJECT_FILE = "Pulumi.yaml"
ORG_FILE_NAME = "org.yaml"
SPEC_KEYS = frozenset(f"{NAMESPACE}:{workload}" for workload in SPEC_MODELS)


@dataclass(frozen=True)
class Inputs:
    """A stack together with its organization, references resolved."""

    stack: StackDocument
    org: OrgDocument

    @property
    def spec(self) -> WorkloadSpec:
        return self.stack.spec

    @property
    def workload(self) -> Workload:
        return self.stack.workload

    @property
    def account(self) -> Account:
        return self.org.org.accounts[self.spec.account]


def project_dir(start: Path | None = None) -> Path | None:
    """The Pulumi project directory: the nearest directory at or above `start` (the working directory)
    holding Pulumi.yaml. The Pulumi CLI runs programs and policy packs inside the project, so the program,
    the pack and the gpuinfra CLI all find the same stacks and organization file from it."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    return None


def stacks_dir(project: Path) -> Path:
    """Where the project keeps its stack files: Pulumi.yaml's `stackConfigDir`, else the project itself."""
    data = read_yaml(project / PROJECT_FILE, "Pulumi project file").data
    configured = data.get("stackConfigDir") if isinstance(data, dict) else None
    return project / str(configured) if configured else project


def stack_names(project: Path) -> list[str]:
    """Every stack of the project (its Pulumi.<stack>.yaml files)."""
    return sorted(
        p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in stacks_dir(project).glob("Pulumi.*.yaml")
    )


def stack_file(stack: str, project: Path) -> Path:
    return stacks_dir(project) / f"Pulumi.{stack}.yaml"


def stack_path(arg: str, start: Path | None = None) -> Path:
    """A STACK argument is a path to a stack file or a stack name of the Pulumi project around `start`."""
    candidate = Path(arg)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists() or "/" in arg:
        return candidate
    project = project_dir(start)
    if project is None:
        raise InputError.single(
            f"stack {arg!r}: no {PROJECT_FILE} in {(start or Path.cwd()).resolve()} or above it",
            hint="run gpuinfra inside the Pulumi project, or give the stack file's path",
        )
    found = stack_file(arg, project)
    try:  # as the user would write it from here: reports name files the same on every machine
        return found.relative_to(Path.cwd().resolve())
    except ValueError:
        return found


_PINNED: list[Path] = []
"""The organization file the host pinned (the pack's `organization-trusted` config, or the in-process host
handing its own choice to the program it runs): the innermost `pinned_org` block wins."""


@contextmanager
def pinned_org(path: Path | None) -> Iterator[None]:
    """Judge every stack read inside this block by `path` (None: keep the default)."""
    if path is None:
        yield
        return
    _PINNED.append(path)
    try:
        yield
    finally:
        _PINNED.pop()


def trusted_org_path(stack_path: Path, project: Path | None = None) -> Path:
    """The organization file a stack is judged by, which the stack cannot choose: the host's pinned file, else
    org.yaml in the project's stack directory (stacks/org.yaml, guarded by the protected branch), else
    org.yaml beside a stack file that lives outside any project."""
    if _PINNED:
        return _PINNED[-1]
    return (stacks_dir(project) if project is not None else stack_path.parent) / ORG_FILE_NAME


def org_path(config: Mapping[str, Any], stack_path: Path, project: Path | None = None) -> Path:
    """The organization file of a stack, as the program and the policy pack find it under `pulumi up`:
    always the trusted one (`trusted_org_path`); a `gpuinfra:org` naming another is refused by `resolve`."""
    return trusted_org_path(stack_path, project)


def named_org_problems(stack: StackDocument, trusted: Path, project: Path | None = None) -> list[Problem]:
    """A stack that names its own organization file (`gpuinfra:org`) would choose the facts it is judged by
    (accounts and purposes, quotas, budgets): refused unless it names the trusted file itself."""
    given = stack.config.get(ORG_KEY)
    if given is None:
        return []
    named = Path(str(given))
    if not named.is_absolute():
        named = (project or stack.path.parent) / named
    if isinstance(given, str) and given and _same_file(named, trusted):
        return []
    return [
        stack.doc.problem(
            f"the stack names its own organization file ({_quoted(str(given))}); a stack is judged by the "
            f"trusted organization file {trusted}, which it cannot choose",
            ("config", ORG_KEY),
            "remove gpuinfra:org from the stack file; the platform team pins the organization file in the "
            "policy pack's config (separation-trusted-organization.organization_file) or keeps it at stacks/org.yaml",
        )
    ]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def decode_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Config as the Pulumi CLI hands it to a program or a pack: strings, the spec JSON-encoded."""
    return {k: json.loads(v) if k in SPEC_KEYS and isinstance(v, str) else v for k, v in config.items()}


def load_inputs(
    arg: str | Path, org: Path | None = None, catalog: Catalog | None = None, start: Path | None = None
) -> Inputs:
    """Read the stack and its organization file and check every reference; raise InputError."""
    path = arg if isinstance(arg, Path) else stack_path(arg, start)
    if not path.exists() and not path.is_symlink():  # a dangling link or a loop: read_yaml says which
        names = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in path.parent.glob("Pulumi.*.yaml"))
        hint = did_you_mean(path.name.removeprefix("Pulumi.").removesuffix(".yaml"), names)
        listed = f"the stacks here: {', '.join(names)}" if names else "no stack here yet: gpuinfra init WORKLOAD NAME"
        raise InputError([Problem("stack file not found", file=path, hint=hint or listed)])
    stack = read_stack(path)
    found = org or org_path(stack.config, path, project_dir(path.parent))
    return resolve(stack, read_org(found), catalog or load_catalog())


def inputs_from_config(stack: str, config: Mapping[str, Any], project: Path, catalog: Catalog) -> Inputs:
    """The stack's inputs from the config the Pulumi CLI hands a program or a policy pack (PULUMI_CONFIG):
    the one reading shared by `infra/gpuinfra/pulumi/program.py` and the pack's facts."""
    decoded = decode_config(config)
    path = stack_file(stack, project)
    document = parse_stack(YamlDocument(path=path, data={"config": decoded}))
    return resolve(document, read_org(org_path(decoded, path, project)), catalog)


def resolve(stack: StackDocument, org: OrgDocument, catalog: Catalog) -> Inputs:
    """The stack against the organization file its host chose; a stack naming another one is refused first."""
    refused = named_org_problems(stack, org.path, project_dir(stack.path.parent))
    if refused:
        raise InputError(refused)
    problems = list(reference_problems(stack, org, catalog))
    if problems:
        raise InputError(problems)
    return Inputs(stack=stack, org=org)


def _quoted(value: str) -> str:
    """A user's value in a message, quoted and cut to a readable length."""
    return repr(value if len(value) <= 60 else value[:57] + "...")


def reference_problems(stack: StackDocument, org: OrgDocument, catalog: Catalog) -> Iterator[Problem]:
    """Every reference from the stack that does not resolve, located in the stack file."""
    spec = stack.spec

    def at(path: FieldPath, message: str, hint: str | None = None) -> Problem:
        full = (*stack.spec_prefix, *path)
        return stack.doc.problem(message, full, hint)

    accounts = org.org.accounts
    if spec.account not in accounts:
        hint = did_you_mean(spec.account, accounts) or f"accounts in {org.path.name}: {', '.join(sorted(accounts))}"
        yield at(("account",), f"account {_quoted(spec.account)} is not in the organization file {org.path}", hint)

    def instance(path: FieldPath, name: str) -> Iterator[Problem]:
        if catalog.instance(name) is None:
            yield at(
                path,
                f"unknown instance type {_quoted(name)}",
                did_you_mean(name, catalog.instance_names())
                or "name an instance type of the catalog, e.g. p5.48xlarge",
            )

    def region(path: FieldPath, code: str | None) -> Iterator[Problem]:
        if code is not None and code not in catalog.regions:
            yield at(
                path,
                f"unknown region {_quoted(code)}",
                did_you_mean(code, catalog.regions) or "name an AWS region code, e.g. us-east-1",
            )

    if isinstance(spec, TrainingSpec):
        yield from instance(("compute", "instance_type"), spec.compute.instance_type)
        if spec.provider == "aws":
            yield from region(("region",), spec.region)
            if spec.scheduler.type == "slurm":
                yield from instance(("scheduler", "login_instance_type"), spec.scheduler.login_instance_type)
        else:
            sites = org.org.onprem_sites
            if spec.site not in sites:
                yield at(
                    ("site",),
                    f"site {spec.site!r} is not in the organization's onprem_sites",
                    did_you_mean(spec.site or "", sites)
                    or f"sites in {org.path.name}: {', '.join(sorted(sites)) or 'none (add onprem_sites)'}",
                )
            if spec.onprem and spec.onprem.kubeconfig_key not in stack.config:
                key = spec.onprem.kubeconfig_key
                yield at(
                    ("onprem", "kubeconfig_key"),
                    f"config key {key!r} is not set in this stack",
                    f'add it with: pulumi config set --secret {key} "$(cat kubeconfig)"',
                )
    elif isinstance(spec, InferenceSpec):
        if spec.instance.type != "auto":
            yield from instance(("instance", "type"), spec.instance.type)
        gpu = spec.instance.gpu
        if gpu is not None and gpu not in catalog.accelerator_names():
            yield at(
                ("instance", "gpu"),
                f"unknown accelerator {_quoted(gpu)}",
                did_you_mean(gpu, catalog.accelerator_names())
                or f"name one of the catalog's: {', '.join(catalog.accelerator_names())}",
            )
        for i, fleet_region in enumerate(spec.regions):
            yield from region(("regions", i, "region"), fleet_region.region)
            if fleet_region.instance_type:
                yield from instance(("regions", i, "instance_type"), fleet_region.instance_type)
        if org.org.registry is None:
            yield at(
                ("model",),
                "inference reads weights from the model registry; the organization file has no registry",
                f"add registry: (account, bucket, region) to {org.path.name}",
            )
        if spec.kubernetes is not None:
            for name, key in spec.kubernetes.kubeconfig_keys.items():
                if key not in stack.config:
                    yield at(
                        ("kubernetes", "kubeconfig_keys", name),
                        f"config key {key!r} is not set in this stack",
                        f'add it with: pulumi config set --secret {key} "$(cat kubeconfig)"',
                    )
    elif isinstance(spec, FinetuneSpec):
        yield from region(("region",), spec.region)
        if spec.instance_type != "auto":
            yield from instance(("instance_type",), spec.instance_type)
        if spec.kueue is not None and spec.kueue.kubeconfig_key not in stack.config:
            key = spec.kueue.kubeconfig_key
            yield at(
                ("kueue", "kubeconfig_key"),
                f"config key {key!r} is not set in this stack",
                f'add it with: pulumi config set --secret {key} "$(cat kubeconfig)"',
            )
        if org.org.registry is None:
            yield at(
                ("adapter_prefix",),
                "fine-tuning reads the base and writes adapters in the model registry; the organization has none",
                f"add registry: (account, bucket, region) to {org.path.name}",
            )
    elif isinstance(spec, DataprepSpec):
        yield from region(("region",), spec.region)
        yield from instance(("workers", "instance_type"), spec.workers.instance_type)
        if spec.workers.cluster_instance_type is not None:
            yield from instance(("workers", "cluster_instance_type"), spec.workers.cluster_instance_type)
        for i, reader in enumerate(spec.output.readers):
            found = accounts.get(reader)
            if found is None or found.purpose != "training":
                yield at(
                    ("output", "readers", i),
                    f"{_quoted(reader)} is not a training account of {org.path.name}: only training reads the tokens",
                    did_you_mean(reader, [n for n, a in accounts.items() if a.purpose == "training"])
                    or "list the training accounts that read the shards",
                )
    elif isinstance(spec, RegistrySpec):
        registry = org.org.registry
        if registry is None:
            yield at(
                (),
                "a registry stack needs the organization file's registry entry (account, bucket, regions)",
                f"add registry: to {org.path.name}",
            )
        elif registry.account != spec.account:
            yield at(
                ("account",),
                f"the organization's registry lives in account {registry.account!r}, not {_quoted(spec.account)}",
                f"set account: {registry.account}",
            )
        else:
            for i, code in enumerate(registry.replica_regions):
                if code not in catalog.regions:
                    yield org.doc.problem(
                        f"unknown region {code!r}",
                        ("registry", "replica_regions", i),
                        did_you_mean(code, catalog.regions) or "name an AWS region code, e.g. us-east-1",
                    )


__all__ = [
    "ORG_FILE_NAME",
    "PROJECT_FILE",
    "SPEC_KEYS",
    "Inputs",
    "decode_config",
    "inputs_from_config",
    "load_inputs",
    "named_org_problems",
    "org_path",
    "pinned_org",
    "project_dir",
    "reference_problems",
    "resolve",
    "stack_file",
    "stack_names",
    "stack_path",
    "stacks_dir",
    "trusted_org_path",
]
