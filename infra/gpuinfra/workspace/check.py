"""A stack loaded, then planned and validated with its account's holdings: what `validate` and `preview` start
from."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.load import load_inputs
from gpuinfra.validators.checked import Checked, check
from gpuinfra.workspace import workspace_of


def check_stack(
    stack: str | Path, org: Path | None = None, suppress: Iterable[str] = (), catalog: Catalog | None = None
) -> Checked:
    """Load a stack file and its organization, read its folder's other stacks (a hostile one refused by name),
    then plan and validate it."""
    catalog = catalog or load_catalog()
    inputs = load_inputs(stack, org, catalog)
    quotas = workspace_of(inputs.stack.path, inputs.org.path).quotas_of(inputs)
    return check(inputs, catalog, suppress, quotas)


__all__ = ["check_stack"]
