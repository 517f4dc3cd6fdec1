"""The pack's entry under `pulumi preview --policy-pack policies`: the running stack's facts read from the
config the engine hands the pack (PULUMI_CONFIG, PULUMI_STACK), its folder's other stacks through the workspace,
against the pinned organization file (or a trusted git revision's: gpuinfra.workspace.trusted), so the pack
judges a stack with the same AccountFacts `gpuinfra preview` folds. Anything unreadable is a FactsError: the pack
fails closed."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.load import SPEC_KEYS, inputs_from_config, pinned_org, project_dir
from gpuinfra.plan import build_plan
from gpuinfra.plan.account import in_account
from gpuinfra.policy.facts import FactsError, StackFacts, install_source
from gpuinfra.workspace import workspace_of
from gpuinfra.workspace.trusted import revision_organization, trusted_revision


def serve() -> None:
    """Install the facts' source, then serve the pack (gRPC; blocks)."""
    from gpuinfra.policy.rules import serve as serve_pack

    install_source(environment_facts)
    serve_pack()


def environment_facts(pinned: str, base_ref: str = "") -> StackFacts | None:
    """The running stack's facts from the engine's environment (once per process), against the pinned organization
    file, else the one of the trusted git revision (gpuinfra.workspace.trusted), else the working tree's."""
    if not pinned and (revision := trusted_revision(base_ref)):
        pinned = str(revision_organization(revision))
    return _from_environment(os.environ.get("PULUMI_STACK", ""), os.environ.get("PULUMI_CONFIG", ""), pinned)


@lru_cache(maxsize=4)
def _from_environment(stack: str, config_json: str, pinned: str = "") -> StackFacts | None:
    try:
        config = json.loads(config_json or "{}")
    except ValueError as exc:
        raise FactsError(f"cannot read PULUMI_CONFIG: not JSON ({str(exc)[:120]})") from None
    if not isinstance(config, dict):
        raise FactsError("cannot read PULUMI_CONFIG: not a JSON object of config keys")
    with pinned_org(Path(pinned) if pinned else None):
        return facts_from_config(stack, config)


def facts_from_config(stack: str, config: Mapping[str, Any], project: Path | None = None) -> StackFacts | None:
    """The facts of `stack` from its Pulumi config, read as the program reads it (`inputs_from_config`), with its
    account's other stacks; None when it is not a gpuinfra stack. Anything unreadable raises FactsError."""
    if not any(key in config for key in SPEC_KEYS):
        return None
    root = project or project_dir() or Path.cwd()
    try:
        catalog = load_catalog()
        inputs = inputs_from_config(stack, config, root, catalog)
        workspace = workspace_of(inputs.stack.path, inputs.org.path)
        plan = in_account(build_plan(inputs.spec, inputs.org.org, catalog), workspace.quotas_of(inputs))
        held = workspace.facts(inputs)
    except InputError as exc:
        raise FactsError(f"cannot read the stack's gpuinfra config: {exc.problems[0].render()}") from None
    except ValueError as exc:  # a spec key that is not the JSON the Pulumi CLI writes
        raise FactsError(f"cannot read the stack's gpuinfra config: not JSON ({str(exc)[:120]})") from None
    return StackFacts.of(inputs, plan, catalog, held)


__all__ = ["environment_facts", "facts_from_config", "serve"]
