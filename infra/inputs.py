"""Everything a run needs from the user's files: the stack, the organization, and the references
between them (accounts, instance types, regions, sites) checked against the catalog.

A broken reference is an input error (exit 2): nothing downstream can plan without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .catalog import Catalog, load_catalog
from .errors import FieldPath, InputError, Problem
from .spec import (
    Account,
    InferenceSpec,
    OrgDocument,
    RegistrySpec,
    StackDocument,
    TrainingSpec,
    Workload,
    WorkloadSpec,
    did_you_mean,
    read_org,
    read_stack,
)

DEFAULT_STACKS_DIR = Path("stacks")
ORG_FILE_NAME = "org.yaml"


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


def stack_path(arg: str, stacks_dir: Path = DEFAULT_STACKS_DIR) -> Path:
    """A STACK argument is a path to a stack file or a stack name in `stacks_dir`."""
    candidate = Path(arg)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists() or "/" in arg:
        return candidate
    return stacks_dir / f"Pulumi.{arg}.yaml"


def load_inputs(arg: str | Path, org_path: Path | None = None, catalog: Catalog | None = None) -> Inputs:
    """Read the stack and its organization file and check every reference; raise InputError."""
    path = arg if isinstance(arg, Path) else stack_path(arg)
    if not path.exists():
        names = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in path.parent.glob("Pulumi.*.yaml"))
        hint = did_you_mean(path.name.removeprefix("Pulumi.").removesuffix(".yaml"), names)
        raise InputError([Problem("stack file not found", file=path, hint=hint or "give a stack name or a path")])
    stack = read_stack(path)
    org = read_org(org_path or path.parent / ORG_FILE_NAME)
    return resolve(stack, org, catalog or load_catalog())


def resolve(stack: StackDocument, org: OrgDocument, catalog: Catalog) -> Inputs:
    problems = list(reference_problems(stack, org, catalog))
    if problems:
        raise InputError(problems)
    return Inputs(stack=stack, org=org)


def reference_problems(stack: StackDocument, org: OrgDocument, catalog: Catalog) -> Iterator[Problem]:
    """Every reference from the stack that does not resolve, located in the stack file."""
    spec = stack.spec

    def at(path: FieldPath, message: str, hint: str | None = None) -> Problem:
        full = (*stack.spec_prefix, *path)
        return stack.doc.problem(message, full, hint)

    accounts = org.org.accounts
    if spec.account not in accounts:
        hint = did_you_mean(spec.account, accounts) or f"accounts in {org.path.name}: {', '.join(sorted(accounts))}"
        yield at(("account",), f"account {spec.account!r} is not in the organization file {org.path}", hint)

    def instance(path: FieldPath, name: str) -> Iterator[Problem]:
        if catalog.instance(name) is None:
            yield at(path, f"unknown instance type {name!r}", did_you_mean(name, catalog.instance_names()))

    def region(path: FieldPath, code: str | None) -> Iterator[Problem]:
        if code is not None and code not in catalog.regions:
            yield at(path, f"unknown region {code!r}", did_you_mean(code, catalog.regions))

    if isinstance(spec, TrainingSpec):
        yield from instance(("compute", "instance_type"), spec.compute.instance_type)
        if spec.provider == "aws":
            yield from region(("region",), spec.region)
            if spec.scheduler.type == "slurm":
                yield from instance(("scheduler", "controller_instance_type"), spec.scheduler.controller_instance_type)
        else:
            sites = org.org.onprem_sites
            if spec.site not in sites:
                yield at(
                    ("site",),
                    f"site {spec.site!r} is not in the organization's onprem_sites",
                    did_you_mean(spec.site or "", sites),
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
        for i, fleet_region in enumerate(spec.regions):
            yield from region(("regions", i, "region"), fleet_region.region)
            if fleet_region.instance_type:
                yield from instance(("regions", i, "instance_type"), fleet_region.instance_type)
        if org.org.registry is None:
            yield at(
                ("model",), "inference reads weights from the model registry; the organization file has no registry"
            )
        if spec.kubernetes is not None:
            for name, key in spec.kubernetes.kubeconfig_keys.items():
                if key not in stack.config:
                    yield at(
                        ("kubernetes", "kubeconfig_keys", name),
                        f"config key {key!r} is not set in this stack",
                        f'add it with: pulumi config set --secret {key} "$(cat kubeconfig)"',
                    )
    elif isinstance(spec, RegistrySpec):
        registry = org.org.registry
        if registry is None:
            yield at((), "a registry stack needs the organization file's registry entry (account, bucket, regions)")
        elif registry.account != spec.account:
            yield at(
                ("account",), f"the organization's registry lives in account {registry.account!r}, not {spec.account!r}"
            )
        else:
            for i, code in enumerate(registry.replica_regions):
                if code not in catalog.regions:
                    yield org.doc.problem(
                        f"unknown region {code!r}",
                        ("registry", "replica_regions", i),
                        did_you_mean(code, catalog.regions),
                    )


__all__ = [
    "DEFAULT_STACKS_DIR",
    "ORG_FILE_NAME",
    "Inputs",
    "load_inputs",
    "reference_problems",
    "resolve",
    "stack_path",
]
