"""Auto Scaling resources -> EC2 Auto Scaling API requests, following terraform-provider-aws
internal/service/autoscaling (group.go `expandMixedInstancesPolicy`, `expandPutWarmPoolInput`,
`expandStartInstanceRefreshInput`, `expandLifecycleHookSpecifications`; policy.go `getPutScalingPolicyInput`;
schedule.go)."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, float_str, int_str
from gpuinfra.graph import Resource

ASG = "autoscaling"

LAUNCH_TEMPLATE_SPEC = {"id": "LaunchTemplateId", "name": "LaunchTemplateName"}
MIXED = F(
    fields={
        "launchTemplate": F(
            fields={
                "launchTemplateSpecification": F(fields=LAUNCH_TEMPLATE_SPEC),
                "overrides": F(fields={"launchTemplateSpecification": F(fields=LAUNCH_TEMPLATE_SPEC)}),
            }
        )
    }
)
GROUP = {
    "name": DROP,
    "namePrefix": DROP,
    "vpcZoneIdentifiers": F("VPCZoneIdentifier", lambda v: ",".join(v) if isinstance(v, list) else v),
    "launchTemplate": F(fields=LAUNCH_TEMPLATE_SPEC),
    "mixedInstancesPolicy": MIXED,
    "launchConfiguration": "LaunchConfigurationName",
    "protectFromScaleIn": "NewInstancesProtectedFromScaleIn",
    "targetGroupArns": "TargetGroupARNs",
    "loadBalancers": "LoadBalancerNames",
    "serviceLinkedRoleArn": "ServiceLinkedRoleARN",
    "initialLifecycleHooks": F("LifecycleHookSpecificationList", fields={"name": "LifecycleHookName"}),
    "tags": F(fields={}),
    # Handled by the provider or sent in other calls:
    "warmPool": DROP,
    "instanceRefresh": DROP,
    "waitForCapacityTimeout": DROP,
    "waitForElbCapacity": DROP,
    "minElbCapacity": DROP,
    "forceDelete": DROP,
    "forceDeleteWarmPool": DROP,
    "ignoreFailedScalingActivities": DROP,
    "suspendedProcesses": DROP,
    "enabledMetrics": DROP,
    "metricsGranularity": DROP,
}


def group(r: Resource) -> list[Call]:
    i = r.inputs
    name = i.get("name", AUTONAME)
    create = Call(ASG, "CreateAutoScalingGroup").put("AutoScalingGroupName", name, "name")
    calls = [create.fill(i, GROUP)]
    for n, tag in enumerate(create.params.get("Tags", [])):
        # group.go expandTags: every tag names its group.
        tag.setdefault("ResourceId", name)
        tag.setdefault("ResourceType", "auto-scaling-group")
        create.paths.setdefault(f".Tags[{n}]", f"tags[{n}]")
    if "warmPool" in i:
        warm = Call(ASG, "PutWarmPool").put("AutoScalingGroupName", name)
        calls.append(warm.fill(i["warmPool"], at="warmPool"))
    if "instanceRefresh" in i:
        refresh = dict(i["instanceRefresh"])
        call = Call(ASG, "StartInstanceRefresh").put("AutoScalingGroupName", name)
        spec = {
            "triggers": DROP,
            "preferences": F(
                fields={
                    "instanceWarmup": F(convert=int_str),
                    "checkpointDelay": F(convert=int_str),
                    "alarmSpecification": F(fields={}),
                }
            ),
        }
        call.fill(refresh, spec, at="instanceRefresh")
        if (refresh.get("preferences") or {}).get("autoRollback") is True:
            # group.go expandStartInstanceRefreshInput: with AutoRollback the provider sends the group's launch
            # template or mixed instances policy as DesiredConfiguration ("The AutoRollback parameter cannot be
            # set to true when the DesiredConfiguration parameter is empty").
            desired = {k: create.params[k] for k in ("LaunchTemplate", "MixedInstancesPolicy") if k in create.params}
            call.put("DesiredConfiguration", desired)
            for member, source in (
                ("LaunchTemplate", "launchTemplate"),
                ("MixedInstancesPolicy", "mixedInstancesPolicy"),
            ):
                if member in desired:
                    call.paths[f".DesiredConfiguration.{member}"] = source
        calls.append(call)
    return calls


def policy(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(ASG, "PutScalingPolicy").put("PolicyName", i.get("name", AUTONAME), "name")
    spec = {
        "name": DROP,
        "stepAdjustments": F(
            fields={"metricIntervalLowerBound": F(convert=float_str), "metricIntervalUpperBound": F(convert=float_str)}
        ),
        "targetTrackingConfiguration": F(
            fields={"customizedMetricSpecification": F(fields={"metricDimensions": "Dimensions"})}
        ),
    }
    return [call.fill(i, spec)]


def schedule(r: Resource) -> list[Call]:
    # schedule.go sends min/max/desired only when set (the provider's -1 means unset).
    values = {k: v for k, v in r.inputs.items() if not (k in ("minSize", "maxSize", "desiredCapacity") and v == -1)}
    return [Call(ASG, "PutScheduledUpdateGroupAction").fill(values)]


def lifecycle_hook(r: Resource) -> list[Call]:
    spec = {"name": "LifecycleHookName"}
    return [Call(ASG, "PutLifecycleHook").fill(r.inputs, spec)]


__all__ = ["group", "lifecycle_hook", "policy", "schedule"]
