"""Registry: who may promote a release into the model prefix."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import RegistryPlan
from gpuinfra.spec import RegistrySpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def promoter_not_a_role(spec: RegistrySpec, plan: RegistryPlan) -> Iterator[Failure]:
    """The promote role must trust named roles, not accounts: an account root in its trust policy lets every
    principal that account's IAM allows assume it and write releases every fleet then loads (IAM UG, "Cross account
    resource access in IAM": a root principal delegates the choice to that account). Without registry.promoters
    the default is the training accounts' roots, so it fires then too."""
    roots = [p for p in plan.promoters if p.endswith(":root")]
    if roots:
        yield Failure(
            f"the promote role would trust whole accounts ({', '.join(roots)}; registry.promoters in the "
            "organization file, default: the training accounts): any principal they allow could release weights "
            "every fleet then loads",
            ("account",),
            "name the releasing role in the organization file: write `promoters: "
            "[arn:aws:iam::<training account>:role/<release role>]` under registry",
        )


__all__ = ["promoter_not_a_role"]
