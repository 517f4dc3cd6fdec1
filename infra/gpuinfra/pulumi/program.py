"""The Pulumi program (Pulumi.yaml `main`): what `pulumi up -s <stack>` runs, unchanged.

It reads the stack's spec from Pulumi config, resolves it against the organization file and the
catalog (`gpuinfra.load.inputs_from_config`, the reading the policy pack shares), plans it, refuses to create
anything while an error-level finding stands, and then builds the components. `gpuinfra preview` has done
those checks already and runs `build` in-process under mocks (infra/gpuinfra/pulumi/preview.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, get_config_secret_keys_env

from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.load import Inputs, inputs_from_config, project_dir
from gpuinfra.plan import FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.plan.account import account_plan
from gpuinfra.spec import FinetuneSpec, InferenceSpec, RegistrySpec, TrainingSpec
from gpuinfra.validators import Level, validate


def stack_config() -> dict[str, Any]:
    """Every config key of the running stack, as the CLI hands it over (secrets stay blinded)."""
    out: dict[str, Any] = {**get_config_env(), **CONFIG.get()}
    for key in get_config_secret_keys_env():
        out.setdefault(key, {"secure": "[secret]"})
    return out


def load() -> tuple[Inputs, TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan]:
    """Spec from config -> resolved inputs -> plan; error findings stop the program here."""
    project = project_dir() or Path.cwd()
    catalog = load_catalog()
    inputs = inputs_from_config(pulumi.get_stack(), stack_config(), project, catalog)
    plan, problems = account_plan(inputs, catalog)
    findings = validate(inputs.spec, plan, inputs.org.org, catalog, inputs.stack.config, (), problems)
    errors = [f for f in findings if f.level >= Level.ERROR]
    if errors:
        lines = [f"{f.rule}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in errors]
        raise pulumi.RunError("gpuinfra refuses to build this stack:\n  " + "\n  ".join(lines))
    return inputs, plan


def build(inputs: Inputs, plan: TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan) -> None:
    """Create the stack's providers and components."""
    if isinstance(inputs.spec, TrainingSpec) and isinstance(plan, TrainingPlan):
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


def main() -> None:
    try:
        inputs, plan = load()
    except InputError as exc:
        raise pulumi.RunError(exc.render()) from None
    build(inputs, plan)


if __name__ == "__main__":
    main()
