"""A stack loaded, planned and validated: what every command starts from (and the program refuses to build
without)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.errors import InputError, Problem
from gpuinfra.load import Inputs, load_inputs
from gpuinfra.plan import FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.plan.account import account_plan
from gpuinfra.spec import did_you_mean
from gpuinfra.validators.base import RULES, Finding, Level
from gpuinfra.validators.runner import validate


@dataclass(frozen=True)
class Checked:
    """A stack after loading, planning and validation."""

    inputs: Inputs
    plan: TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan
    findings: list[Finding]

    @property
    def blocked(self) -> bool:
        """An error-level finding stands: nothing may be built (or previewed) from this stack."""
        return any(f.level >= Level.ERROR for f in self.findings)


def check(inputs: Inputs, catalog: Catalog, suppress: Iterable[str] = ()) -> Checked:
    """Plan and validate already-loaded inputs."""
    plan, problems = account_plan(inputs, catalog)
    findings = validate(inputs.spec, plan, inputs.org.org, catalog, inputs.stack.config, suppress, problems)
    return Checked(inputs, plan, findings)


def check_stack(
    stack: str | Path, org: Path | None = None, suppress: Iterable[str] = (), catalog: Catalog | None = None
) -> Checked:
    """Load a stack file and its organization, then plan and validate it."""
    catalog = catalog or load_catalog()
    return check(load_inputs(stack, org, catalog), catalog, suppress)


def check_suppress_ids(suppress: Iterable[str]) -> None:
    """Every id given to --suppress names a rule (a typo would silence nothing, silently)."""
    unknown = sorted(set(suppress) - set(RULES))
    if unknown:
        raise InputError(
            [Problem(f"--suppress names unknown rule {u!r}", hint=did_you_mean(u, RULES)) for u in unknown]
        )


__all__ = ["Checked", "check", "check_stack", "check_suppress_ids"]
