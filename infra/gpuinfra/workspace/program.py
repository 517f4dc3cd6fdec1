"""The Pulumi program (Pulumi.yaml `main`): what `pulumi up -s <stack>` runs.

It reads the stack's spec from Pulumi config and resolves it against the organization file and the catalog
(`gpuinfra.load.inputs_from_config`, the reading the policy pack shares), plans it with what the account's other
stacks hold (the ServiceQuota request sets the account's value, not the stack's share), refuses to create anything
while an error-level finding stands, and then builds the components (gpuinfra.pulumi.program).
"""

from __future__ import annotations

from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph
from gpuinfra.load import Inputs, inputs_from_config, pinned_org, project_dir
from gpuinfra.plan import AnyPlan
from gpuinfra.pulumi.program import refuse_errors, run, running_stack
from gpuinfra.validators.checked import check
from gpuinfra.workspace import workspace_of


def load() -> tuple[Inputs, AnyPlan]:
    """Spec from config -> resolved inputs -> plan counted account-wide; error findings stop the program here."""
    project = project_dir() or Path.cwd()
    catalog = load_catalog()
    stack, config = running_stack()
    inputs = inputs_from_config(stack, config, project, catalog)
    quotas = workspace_of(inputs.stack.path, inputs.org.path).quotas_of(inputs)
    checked = check(inputs, catalog, (), quotas)
    refuse_errors(checked.findings)
    return inputs, checked.plan


def main() -> None:
    run(load)


def program_graph(inputs: Inputs) -> Graph:
    """The graph of the whole program as `pulumi up` runs it: config -> inputs -> plan -> validators -> build,
    from nothing but the config the CLI would hand over. Tests compare it with `preview_graph`."""
    from gpuinfra.pulumi.engine import run as run_engine
    from gpuinfra.pulumi.preview import PROJECT, engine_config

    config, secrets = engine_config(inputs)
    with pinned_org(inputs.org.path):  # the host's choice of organization file, never the stack's
        return run_engine(main, project=PROJECT, stack=inputs.stack.name, config=config, secret_keys=secrets)


if __name__ == "__main__":
    main()
