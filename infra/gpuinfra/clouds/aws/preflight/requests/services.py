"""EKS, CloudWatch, Service Quotas and WAF -> their API requests, following terraform-provider-aws
internal/service/eks (cluster.go `expandVPCConfigRequestForCreate`, `expandLogging`, `expandEncryptionConfig`;
node_group.go), internal/service/cloudwatch (metric_alarm.go `expandPutMetricAlarmInput`),
internal/service/servicequotas (service_quota.go) and internal/service/wafv2 (web_acl.go)."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, one, tag_list
from gpuinfra.graph import Resource

EKS = "eks"


def cluster(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(EKS, "CreateCluster").put("name", i.get("name", AUTONAME), "name")
    if "enabledClusterLogTypes" in i:
        logging = {"clusterLogging": [{"types": i["enabledClusterLogTypes"], "enabled": True}]}
        call.put("logging", logging, "enabledClusterLogTypes")
    if "encryptionConfig" in i:
        call.put("encryptionConfig", [one(i["encryptionConfig"])], "encryptionConfig")
        call.paths[".encryptionConfig[0]"] = "encryptionConfig"
    spec = {
        "name": DROP,
        "enabledClusterLogTypes": DROP,
        "encryptionConfig": DROP,
        "vpcConfig": F("resourcesVpcConfig"),
        "defaultAddonsToRemoves": DROP,
        "forceUpdateVersion": DROP,
        "tags": F(fields={}),
        "tagsAll": DROP,
    }
    return [call.fill(i, spec)]


def node_group(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(EKS, "CreateNodegroup").put("nodegroupName", i.get("nodeGroupName", AUTONAME), "nodeGroupName")
    call.put("clientRequestToken", AUTONAME)
    spec = {
        "nodeGroupName": DROP,
        "nodeGroupNamePrefix": DROP,
        "subnetIds": "subnets",
        "nodeRoleArn": "nodeRole",
        "forceUpdateVersion": DROP,
        "tagsAll": DROP,
    }
    return [call.fill(i, spec)]


def metric_stat(metric: Any) -> Any:
    """A metric query's flat `metric` block -> MetricStat {Metric {Namespace, MetricName, Dimensions}, Period,
    Stat, Unit}, as terraform-provider-aws's expandMetricAlarmMetricsMetric builds it."""
    if not isinstance(metric, dict):
        return metric
    inner: dict[str, Any] = {"Namespace": metric.get("namespace"), "MetricName": metric.get("metricName")}
    dimensions = metric.get("dimensions")
    if isinstance(dimensions, dict):
        inner["Dimensions"] = [{"Name": k, "Value": v} for k, v in dimensions.items()]
    out = {"Metric": {k: v for k, v in inner.items() if v is not None}, "Period": metric.get("period")}
    out |= {"Stat": metric.get("stat"), "Unit": metric.get("unit")}
    return {k: v for k, v in out.items() if v is not None}


def metric_alarm(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call("cloudwatch", "PutMetricAlarm").put("AlarmName", i.get("name", AUTONAME), "name")
    if isinstance(i.get("dimensions"), dict):
        call.put("Dimensions", [{"Name": k, "Value": v} for k, v in i["dimensions"].items()], "dimensions")
    spec: dict[str, Any] = {
        "name": DROP,
        "dimensions": DROP,
        "okActions": "OKActions",
        "evaluateLowSampleCountPercentiles": "EvaluateLowSampleCountPercentile",
        "metricQueries": F("Metrics", fields={"metric": F("MetricStat", convert=metric_stat)}),
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
    }
    return [call.fill(i, spec)]


SNS_TOPIC_KNOWN = {"name", "namePrefix", "tags", "tagsAll"}


def sns_topic(r: Resource) -> list[Call]:
    """sns/topic.go: CreateTopic with the (autonamed) name and tags; the other attributes are left as gaps."""
    i = r.inputs
    call = Call("sns", "CreateTopic").put("Name", i.get("name", AUTONAME), "name")
    if isinstance(i.get("tags"), dict) and i["tags"]:
        call.put("Tags", tag_list()(i["tags"]), "tags")
    call.gaps.extend(k for k in i if k not in SNS_TOPIC_KNOWN)
    return [call]


def sns_topic_policy(r: Resource) -> list[Call]:
    """sns/topic_policy.go: SetTopicAttributes with AttributeName Policy."""
    i = r.inputs
    call = Call("sns", "SetTopicAttributes").put("TopicArn", i.get("arn"), "arn").put("AttributeName", "Policy")
    call.put("AttributeValue", i.get("policy"), "policy")
    call.gaps.extend(k for k in i if k not in ("arn", "policy"))
    return [call]


def sns_subscription(r: Resource) -> list[Call]:
    """sns/topic_subscription.go: Subscribe (TopicArn, Protocol, Endpoint; ReturnSubscriptionArn so an email
    subscription pending confirmation still has an ARN)."""
    i = r.inputs
    call = (
        Call("sns", "Subscribe").put("TopicArn", i.get("topic"), "topic").put("Protocol", i.get("protocol"), "protocol")
    )
    call.put("Endpoint", i.get("endpoint"), "endpoint").put("ReturnSubscriptionArn", True)
    call.gaps.extend(k for k in i if k not in ("topic", "protocol", "endpoint"))
    return [call]


def service_quota(r: Resource) -> list[Call]:
    spec = {"value": "DesiredValue"}
    return [Call("service-quotas", "RequestServiceQuotaIncrease").fill(r.inputs, spec)]


def web_acl(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call("wafv2", "CreateWebACL").put("Name", i.get("name", AUTONAME), "name")
    spec = {
        "name": DROP,
        "namePrefix": DROP,
        "rules": F("Rules"),
        "ruleJson": DROP,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
        "customResponseBodies": F(
            convert=lambda v: (
                {b["key"]: {"ContentType": b.get("contentType"), "Content": b.get("content")} for b in v}
                if isinstance(v, list)
                else v
            )
        ),
    }
    return [call.fill(i, spec)]


def web_acl_association(r: Resource) -> list[Call]:
    return [Call("wafv2", "AssociateWebACL").fill(r.inputs, {"webAclArn": "WebACLArn"})]


def log_group(r: Resource) -> list[Call]:
    """CreateLogGroup, then PutRetentionPolicy for the retention (terraform-provider-aws logs/group.go sends it
    as a second request)."""
    i = r.inputs
    name = i.get("name", AUTONAME)
    create = Call("logs", "CreateLogGroup").put("logGroupName", name, "name")
    create.fill(i, {"name": DROP, "namePrefix": DROP, "retentionInDays": DROP, "skipDestroy": DROP, "tagsAll": DROP})
    calls = [create]
    if i.get("retentionInDays") is not None:
        retention = Call("logs", "PutRetentionPolicy").put("logGroupName", name, "name")
        calls.append(retention.put("retentionInDays", i["retentionInDays"], "retentionInDays"))
    return calls


# CloudWatch Logs vended-log delivery (terraform-provider-aws internal/service/logs delivery_source.go,
# delivery_destination.go, delivery.go, resource_policy.go: AutoFlex copies each input to the member of the same
# name; `region` and `tagsAll` are the provider's own).
LOGS_OWN = {"region": DROP, "tagsAll": DROP}


def delivery_source(r: Resource) -> list[Call]:
    """PutDeliverySource {name, resourceArn, logType, tags}."""
    return [Call("logs", "PutDeliverySource").fill(r.inputs, dict(LOGS_OWN))]


def delivery_destination(r: Resource) -> list[Call]:
    """PutDeliveryDestination {name, deliveryDestinationConfiguration {destinationResourceArn}, outputFormat,
    deliveryDestinationType, tags}."""
    spec: dict[str, Any] = {**LOGS_OWN, "deliveryDestinationConfiguration": F(convert=one)}
    return [Call("logs", "PutDeliveryDestination").fill(r.inputs, spec)]


def delivery(r: Resource) -> list[Call]:
    """CreateDelivery {deliverySourceName, deliveryDestinationArn, recordFields, fieldDelimiter,
    s3DeliveryConfiguration, tags}."""
    spec: dict[str, Any] = {**LOGS_OWN, "s3DeliveryConfigurations": F("s3DeliveryConfiguration", convert=one)}
    return [Call("logs", "CreateDelivery").fill(r.inputs, spec)]


def log_resource_policy(r: Resource) -> list[Call]:
    """PutResourcePolicy {policyName | resourceArn, policyDocument}."""
    return [Call("logs", "PutResourcePolicy").fill(r.inputs, dict(LOGS_OWN))]


def ssm_parameter(r: Resource) -> list[Call]:
    """PutParameter {Name, Type, Value, Tier, Description, DataType, AllowedPattern, KeyId, Tags}
    (terraform-provider-aws internal/service/ssm/parameter.go resourceParameterCreate: Value from value or
    insecure_value; Overwrite is not sent on create)."""
    i = r.inputs
    call = Call("ssm", "PutParameter").put("Name", i.get("name", AUTONAME), "name")
    if "insecureValue" in i:
        call.put("Value", i["insecureValue"], "insecureValue")
    spec: dict[str, Any] = {
        **LOGS_OWN,
        "name": DROP,
        "insecureValue": DROP,
        "arn": DROP,
        "overwrite": DROP,
        "valueWo": DROP,
        "valueWoVersion": DROP,
        "tags": F(convert=tag_list()),
    }
    return [call.fill(i, spec)]


__all__ = [
    "cluster",
    "delivery",
    "delivery_destination",
    "delivery_source",
    "log_group",
    "log_resource_policy",
    "metric_alarm",
    "node_group",
    "service_quota",
    "ssm_parameter",
    "web_acl",
    "web_acl_association",
]
