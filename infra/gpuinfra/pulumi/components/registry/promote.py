"""The promote script (templates/registry/promote.sh.j2), rendered for one registry and its promote role."""

from __future__ import annotations

from gpuinfra.plan import RegistryPlan
from gpuinfra.templating import renderer

render = renderer("registry")


def promote_script(plan: RegistryPlan, role_arn: str) -> str:
    return str(
        render(
            "promote.sh.j2",
            bucket=plan.bucket,
            region=plan.region,
            upload_prefix=plan.upload_prefix,
            model_prefix=plan.model_prefix,
            role_arn=role_arn,
            lock_days=plan.lock_days,
        )
    )


__all__ = ["promote_script"]
