"""An inference stack: one provider per region (all in the inference account), the fleet, and the
provider global routing needs."""

from __future__ import annotations

import pulumi

from gpuinfra.catalog import load_catalog
from gpuinfra.load import Inputs
from gpuinfra.plan import InferencePlan
from gpuinfra.pulumi.components.base import aws_provider, stack_tags
from gpuinfra.pulumi.components.inference.fleet import FleetArgs, InferenceFleet
from gpuinfra.pulumi.components.inference.mirror import mirror_script
from gpuinfra.pulumi.components.inference.routing import GLOBAL_ACCELERATOR_REGION
from gpuinfra.pulumi.components.quotas import request_increases
from gpuinfra.spec import InferenceSpec


def build_inference(inputs: Inputs, plan: InferencePlan) -> None:
    spec = inputs.spec
    assert isinstance(spec, InferenceSpec)
    org = inputs.org.org
    registry = org.registry
    assert registry is not None, "references are resolved before building"
    account = inputs.account
    stack = inputs.stack.name
    tags = stack_tags("inference", stack, "gpuinfra:fleet", spec.name, org.default_tags, spec.tags)
    session = f"gpuinfra-{stack}"

    def provider(region: str) -> pulumi.ProviderResource:
        return aws_provider(f"aws-{spec.account}-{region}", account, region, tags, session)

    providers = {r.region: provider(r.region) for r in plan.regions}
    if spec.platform == "kubernetes":
        # Clusters are reached through kubeconfigs; AWS reads the controller's load balancers, alarms on them
        # and routes with Route 53.
        from gpuinfra.plan.cluster import region_clusters
        from gpuinfra.pulumi.components.inference.kubernetes import KubernetesFleet, KubernetesFleetArgs

        clusters = region_clusters(spec, org)
        fleet = KubernetesFleetArgs(spec, plan, registry, tags, load_catalog(), account.id, clusters, account.alerts)
        KubernetesFleet(spec.name, fleet, providers)
        _exports(spec, plan, account.id)
        return
    if spec.global_routing.type == "global_accelerator":
        routing_provider = providers.get(GLOBAL_ACCELERATOR_REGION) or provider(GLOBAL_ACCELERATOR_REGION)
    else:
        routing_provider = providers[plan.regions[0].region]
    registry_account_id = org.accounts[registry.account].id
    catalog = load_catalog()
    fleet_args = FleetArgs(
        spec,
        plan,
        registry,
        registry_account_id,
        account.id,
        tags,
        catalog.engine(spec.engine),
        account.alerts,
        catalog.time_zones(),
    )
    InferenceFleet(spec.name, fleet_args, providers, routing_provider)
    if account.request_quota_increases:
        request_increases(spec.name, plan.quotas, providers)
    _exports(spec, plan, account.id)


def _exports(spec: InferenceSpec, plan: InferencePlan, account_id: str) -> None:
    pulumi.export("fleet", spec.name)
    pulumi.export("domain_name", spec.global_routing.domain_name)
    pulumi.export("regions", [r.region for r in plan.regions])
    if spec.image_source == "ecr_mirror" and spec.server_image_digest:
        # Run once per digest before the first replica starts: `pulumi stack output mirror_image_script | bash`.
        pulumi.export("mirror_image_script", mirror_script(spec, account_id, [r.region for r in plan.regions]))


__all__ = ["build_inference"]
