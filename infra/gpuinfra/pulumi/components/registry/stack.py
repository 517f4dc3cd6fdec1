"""A registry stack: providers for the home region and every replica region, in the registry account."""

from __future__ import annotations

import pulumi

from gpuinfra.load import Inputs
from gpuinfra.plan import RegistryPlan
from gpuinfra.pulumi.components.base import aws_provider, stack_tags
from gpuinfra.pulumi.components.registry.registry import ModelRegistry, RegistryArgs
from gpuinfra.spec import RegistrySpec


def build_registry(inputs: Inputs, plan: RegistryPlan) -> None:
    spec = inputs.spec
    assert isinstance(spec, RegistrySpec)
    org = inputs.org.org
    registry = org.registry
    assert registry is not None
    account = inputs.account
    stack = inputs.stack.name
    tags = stack_tags("registry", stack, "gpuinfra:registry", spec.name, org.default_tags, spec.tags)
    regions = [plan.region, *(r.region for r in plan.replicas)]
    providers = {r: aws_provider(f"aws-{spec.account}-{r}", account, r, tags, f"gpuinfra-{stack}") for r in regions}
    registry_component = ModelRegistry(
        spec.name,
        RegistryArgs(
            plan=plan,
            account_id=account.id,
            model_prefix=registry.model_prefix,
            noncurrent_version_expiration_days=spec.noncurrent_version_expiration_days,
            kms_deletion_window_days=spec.kms_deletion_window_days,
            protect=spec.protect_data,
            alerts=account.alerts,
        ),
        providers,
    )
    pulumi.export("bucket", plan.bucket)
    pulumi.export("replicas", {r.region: r.bucket for r in plan.replicas})
    # `pulumi stack output promote_script > promote.sh` (docs/registry.md, "Promoting a model version")
    pulumi.export("promote_role", registry_component.promote_role.arn)
    pulumi.export("promote_script", registry_component.promote_script)


__all__ = ["build_registry"]
