"""A stack loaded, planned and validated: what every command starts from (and the program refuses to build
without)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuinfra.catalog import Catalog
from gpuinfra.errors import InputError, Problem
from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan, build_plan
from gpuinfra.plan.account import AccountQuotas, in_account
from gpuinfra.spec import did_you_mean
from gpuinfra.validators.base import Finding, Level
from gpuinfra.validators.runner import known_rules, validate


@dataclass(frozen=True)
class Checked:
    """A stack after loading, planning and validation."""

    inputs: Inputs
    plan: AnyPlan
    findings: list[Finding]

    @property
    def blocked(self) -> bool:
        """An error-level finding stands: nothing may be built (or previewed) from this stack."""
        return any(f.level >= Level.ERROR for f in self.findings)


def check(
    inputs: Inputs, catalog: Catalog, suppress: Iterable[str] = (), quotas: AccountQuotas | None = None
) -> Checked:
    """Plan and validate already-loaded inputs, the plan's quota needs counted with what the account's other
    stacks hold (`quotas`, folded by the workspace; none given: the stack alone)."""
    quotas = quotas or AccountQuotas()
    plan = in_account(build_plan(inputs.spec, inputs.org.org, catalog), quotas)
    account = inputs.org.org.accounts.get(inputs.spec.account)
    problems = quotas.problems_for(account.id) if account is not None else []
    findings = validate(inputs.spec, plan, inputs.org.org, catalog, inputs.stack.config, suppress, problems)
    return Checked(inputs, plan, findings)


def check_suppress_ids(suppress: Iterable[str]) -> None:
    """Every id given to --suppress names a rule (a typo would silence nothing, silently)."""
    ids = list(suppress)
    known = known_rules(ids)
    unknown = sorted(set(ids) - set(known))
    if unknown:
        raise InputError(
            [Problem(f"--suppress names unknown rule {u!r}", hint=did_you_mean(u, known)) for u in unknown]
        )


__all__ = ["Checked", "check", "check_suppress_ids"]
