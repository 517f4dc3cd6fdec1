"""The Pulumi side of the program `pulumi up -s <stack>` runs: the running stack's config, the refusal on error
findings, and the components. The program's entry (Pulumi.yaml `main`, gpuinfra/workspace/program.py) reads the
stack and its account's other stacks and calls `run`; `gpuinfra preview` has done those checks already and runs
`build` in-process under mocks (infra/gpuinfra/pulumi/preview.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, get_config_secret_keys_env

from gpuinfra.clouds import cloud_of
from gpuinfra.errors import InputError
from gpuinfra.findings import Finding, Level
from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan


def stack_config() -> dict[str, Any]:
    """Every config key of the running stack, as the CLI hands it over (secrets stay blinded)."""
    out: dict[str, Any] = {**get_config_env(), **CONFIG.get()}
    for key in get_config_secret_keys_env():
        out.setdefault(key, {"secure": "[secret]"})
    return out


def running_stack() -> tuple[str, dict[str, Any]]:
    """The running stack's name and config, as the Pulumi CLI hands them to the program."""
    return pulumi.get_stack(), stack_config()


def refuse_errors(findings: list[Finding]) -> None:
    """Error findings stop the program before anything is created."""
    errors = [f for f in findings if f.level >= Level.ERROR]
    if errors:
        lines = [f"{f.rule}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in errors]
        raise pulumi.RunError("gpuinfra refuses to build this stack:\n  " + "\n  ".join(lines))


def build(inputs: Inputs, plan: AnyPlan) -> None:
    """Create the stack's providers and components: the component tree its cloud names (the registry's
    `program`)."""
    cloud_of(inputs.spec).part("program")(inputs, plan)


def run(load: Callable[[], tuple[Inputs, AnyPlan]]) -> None:
    """The program: `load` (config -> inputs -> plan, refused on error findings), then the components; an
    unreadable input is the program's error, as Pulumi prints it."""
    try:
        inputs, plan = load()
    except InputError as exc:
        raise pulumi.RunError(exc.render()) from None
    build(inputs, plan)
