"""The Pulumi program (Pulumi.yaml `main`): what `pulumi up -s <stack>` runs, unchanged.

It reads the stack's spec from Pulumi config, resolves it against the organization file and the
catalog, plans it, refuses to create anything while an error-level finding stands, and then builds
the components. `gpuinfra preview` runs this same `main()` in-process under mocks (engine.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, get_config_secret_keys_env

from infra.catalog import load_catalog
from infra.errors import InputError
from infra.inputs import Inputs, resolve
from infra.plan import InferencePlan, RegistryPlan, TrainingPlan, build_plan
from infra.spec import (
    NAMESPACE,
    ORG_KEY,
    SPEC_MODELS,
    InferenceSpec,
    RegistrySpec,
    TrainingSpec,
    YamlDocument,
    parse_stack,
    read_org,
)
from infra.validators import Level, validate

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SPEC_KEYS = frozenset(f"{NAMESPACE}:{workload}" for workload in SPEC_MODELS)
DEFAULT_ORG = PROJECT_ROOT / "stacks" / "org.yaml"


def stack_config() -> dict[str, Any]:
    """Every config key of the running stack; gpuinfra's structured values decoded from JSON."""
    raw: dict[str, Any] = {**get_config_env(), **CONFIG.get()}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in SPEC_KEYS and isinstance(value, str):
            value = json.loads(value)
        out[key] = value
    for key in get_config_secret_keys_env():
        out.setdefault(key, {"secure": "[secret]"})
    return out


def load() -> tuple[Inputs, TrainingPlan | InferencePlan | RegistryPlan]:
    """Spec from config -> resolved inputs -> plan; error findings stop the program here."""
    config = stack_config()
    stack_file = PROJECT_ROOT / "stacks" / f"Pulumi.{pulumi.get_stack()}.yaml"
    stack = parse_stack(YamlDocument(path=stack_file, data={"config": config}))
    org_path = Path(str(config.get(ORG_KEY) or DEFAULT_ORG))
    catalog = load_catalog()
    inputs = resolve(stack, read_org(org_path if org_path.is_absolute() else PROJECT_ROOT / org_path), catalog)
    plan = build_plan(inputs.spec, inputs.org.org, catalog)
    errors = [f for f in validate(inputs.spec, plan, inputs.org.org, catalog, config) if f.level >= Level.ERROR]
    if errors:
        lines = [f"{f.rule}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in errors]
        raise pulumi.RunError("gpuinfra refuses to build this stack:\n  " + "\n  ".join(lines))
    return inputs, plan


def build(inputs: Inputs, plan: TrainingPlan | InferencePlan | RegistryPlan) -> None:
    """Create the stack's providers and components."""
    if isinstance(inputs.spec, TrainingSpec) and isinstance(plan, TrainingPlan):
        from infra.components.training.stack import build_training

        build_training(inputs, plan)
    elif isinstance(inputs.spec, InferenceSpec) and isinstance(plan, InferencePlan):
        from infra.components.inference.stack import build_inference

        build_inference(inputs, plan)
    elif isinstance(inputs.spec, RegistrySpec) and isinstance(plan, RegistryPlan):
        from infra.components.registry.stack import build_registry

        build_registry(inputs, plan)


def main() -> None:
    try:
        inputs, plan = load()
    except InputError as exc:
        raise pulumi.RunError(exc.render()) from None
    build(inputs, plan)


if __name__ == "__main__":
    main()
