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
from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan, DataprepPlan, FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, RegistrySpec, TrainingSpec
from gpuinfra.spec.target import workload_of
from gpuinfra.validators import Finding, Level


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
    """Create the stack's providers and components."""
    own = cloud_of(inputs.spec).part("program", workload_of(inputs.spec))  # a cloud's own tree; None: built-in
    if own is not None:
        own(inputs, plan)
    elif isinstance(inputs.spec, TrainingSpec) and isinstance(plan, TrainingPlan):
        from gpuinfra.pulumi.components.training.stack import build_training

        build_training(inputs, plan)
    elif isinstance(inputs.spec, InferenceSpec) and isinstance(plan, InferencePlan):
        from gpuinfra.pulumi.components.inference.stack import build_inference

        build_inference(inputs, plan)
    elif isinstance(inputs.spec, RegistrySpec) and isinstance(plan, RegistryPlan):
        from gpuinfra.pulumi.components.registry.stack import build_registry

        build_registry(inputs, plan)
    elif isinstance(inputs.spec, FinetuneSpec) and isinstance(plan, FinetunePlan):
        from gpuinfra.pulumi.components.finetune.stack import build_finetune

        build_finetune(inputs, plan)
    elif isinstance(inputs.spec, DataprepSpec) and isinstance(plan, DataprepPlan):
        from gpuinfra.pulumi.components.dataprep.stack import build_dataprep

        build_dataprep(inputs, plan)
    else:
        raise TypeError(f"no program for a {type(inputs.spec).__name__} with a {type(plan).__name__}")


def run(load: Callable[[], tuple[Inputs, AnyPlan]]) -> None:
    """The program: `load` (config -> inputs -> plan, refused on error findings), then the components; an
    unreadable input is the program's error, as Pulumi prints it."""
    try:
        inputs, plan = load()
    except InputError as exc:
        raise pulumi.RunError(exc.render()) from None
    build(inputs, plan)
