"""Hardened-default policies (issue #32) on the examples' real graphs: each passes on the example and fires on a
copy with the hardening removed or weakened the way a hand-edited program would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import pack_config, police
from helpers import DELETE, example_graph
from policy_helpers import PolicyCase, edited, facts_for, run_case

VPC = "aws:ec2/vpc:Vpc"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
TO_LOG_GROUPS = {"flow_logs": "cloud-watch-logs"}
DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
WEB_ACL = "aws:wafv2/webAcl:WebAcl"
WAF_LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"
NAMESPACE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
K8S_SERVICE = "kubernetes:core/v1:Service"
SSL_CERT = "service.beta.kubernetes.io/aws-load-balancer-ssl-cert"
ENFORCE = "pod-security.kubernetes.io/enforce"
ALL_IN = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}
ALLOW_ONLY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::x/*",
            }
        ],
    }
)
EXAMPLES = ["llm-train", "llm-train-eks", "chat-serve", "chat-serve-k8s", "model-registry"]
"""The examples that create VPCs or buckets (chat-serve-k8s creates no VPC, only its NLBs' access-log buckets)."""
HARDENING = ["security-vpc-flow-logs", "security-default-sg-closed", "security-s3-tls-only", "security-lb-waf-logging"]
COVERS = HARDENING
"""test_examples_pass_and_a_copy_without_hardening_fails judges each on the examples both ways."""

CASES = [
    PolicyCase(
        "security-vpc-flow-logs",
        "llm-train",
        edits=((FLOW_LOG, None, {"trafficType": "REJECT"}),),
        message="VPC llm-train-net-vpc: flow log llm-train-net-flow-log records REJECT traffic only",
    ),
    PolicyCase(
        "security-vpc-flow-logs",
        "chat-serve",
        spec=TO_LOG_GROUPS,
        edits=((LOG_GROUP, None, {"retentionInDays": DELETE}),),
        message="keeps flow logs forever \\(no retention_in_days\\)",
    ),
    PolicyCase(
        "security-vpc-flow-logs",
        "llm-train",
        spec=TO_LOG_GROUPS,
        edits=((FLOW_LOG, None, {"iamRoleArn": DELETE}),),
        message="delivers to CloudWatch Logs without iam_role_arn",
    ),
    PolicyCase("security-vpc-flow-logs", "llm-train", fires=False, spec=TO_LOG_GROUPS),
    PolicyCase(
        "security-vpc-flow-logs",
        "chat-serve",
        label="bucket-without-expiry",
        edits=((LIFECYCLE, "chat-serve-eu-central-1-net-flow-logs-retention", {"rules": []}),),
        message="VPC chat-serve-eu-central-1-net-vpc: bucket chat-serve-eu-central-1-net-flow-logs keeps flow logs "
        "forever",
    ),
    PolicyCase(
        "security-vpc-flow-logs",
        "llm-train",
        label="expiry-disabled",
        edits=((LIFECYCLE, "llm-train-net-flow-logs-retention", {"rules[0].status": "Disabled"}),),
        message="keeps flow logs forever: add a lifecycle rule",
    ),
    PolicyCase(
        "security-default-sg-closed",
        "llm-train-eks",
        edits=((DEFAULT_SG, None, {"ingress": [ALL_IN]}),),
        message="the default security group of VPC llm-train-eks-net-vpc keeps ingress rules",
    ),
    PolicyCase(
        "security-s3-tls-only",
        "llm-train",
        edits=((BUCKET_POLICY, None, {"policy": ALLOW_ONLY}),),
        message="bucket llm-train-storage-checkpoints accepts requests without TLS",
    ),
    PolicyCase(
        "security-lb-waf-logging",
        "chat-serve",
        edits=((LOAD_BALANCER, "chat-serve-us-east-1-endpoint-lb", {"accessLogs.enabled": False}),),
        message="load balancer chat-serve-us-east-1-endpoint-lb keeps no access logs",
    ),
    PolicyCase(
        "security-s3-tls-only",
        "chat-serve",
        edits=((BUCKET_POLICY, "chat-serve-us-west-2-endpoint-access-logs-policy", {"policy": ALLOW_ONLY}),),
        message="bucket chat-serve-us-west-2-endpoint-access-logs accepts requests without TLS",
    ),
    PolicyCase("security-lb-waf-logging", "chat-serve-k8s", fires=False),
    PolicyCase(
        "security-lb-waf-logging",
        "chat-serve-k8s",
        label="tls-nlb-without-logs",
        edits=((K8S_SERVICE, "chat-k8s-us-east-1-service", {"metadata.annotations": {SSL_CERT: "arn:aws:acm:x"}}),),
        message="Service chat-k8s-us-east-1-service gets an NLB with a TLS listener that keeps no access logs",
    ),
    PolicyCase(
        "security-lb-waf-logging",
        "chat-serve-k8s",
        label="tcp-nlb-needs-none",
        fires=False,
        edits=((K8S_SERVICE, None, {"metadata.annotations": {"a": "b"}}),),
    ),
    PolicyCase("security-namespace-isolation", "llm-train-eks", fires=False),
    PolicyCase("security-namespace-isolation", "chat-serve-k8s", fires=False),
    PolicyCase(
        "security-namespace-isolation",
        "chat-serve-k8s",
        label="no-default-deny",
        edits=((NETWORK_POLICY, "chat-k8s-us-east-1-default-deny", {"spec.podSelector": {"matchLabels": {"a": "b"}}}),),
        message="namespace chat has no default-deny NetworkPolicy",
    ),
    PolicyCase(
        "security-namespace-isolation",
        "llm-train-eks",
        label="restricted-with-ipc-lock",
        edits=((NAMESPACE, None, {"metadata.labels": {ENFORCE: "restricted"}}),),
        message="its pods fail the restricted level namespace training enforces: .*adds IPC_LOCK",
    ),
    PolicyCase(
        "security-namespace-isolation",
        "chat-serve-k8s",
        label="no-label",
        edits=((NAMESPACE, None, {"metadata.labels": {"gpuinfra.io/workload": "inference"}}),),
        message="namespace chat has no pod-security.kubernetes.io/enforce label",
    ),
    PolicyCase(
        "security-s3-tls-only",
        "model-registry",
        edits=((BUCKET_POLICY, None, {"policy": ALLOW_ONLY}),),
        message="accepts requests without TLS",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_weakened_hardening_is_caught(case: PolicyCase) -> None:
    run_case(case)


def _violations(stack: str, graph: Graph) -> dict[str, list[str]]:
    run = police(graph, facts_for(stack), pack_config())
    out: dict[str, list[str]] = {name: [] for name in HARDENING}
    for v in run.violations:
        if v.rule in out:
            out[v.rule].append(v.message)
    return out


def _without(graph: Graph, *types: str) -> Graph:
    return Graph.of(graph.stack, graph.project, [r for r in graph.resources if r.type not in types])


@pytest.mark.parametrize("stack", EXAMPLES)
def test_examples_pass_and_a_copy_without_hardening_fails(stack: str) -> None:
    graph = example_graph(stack)
    assert _violations(stack, graph) == {name: [] for name in HARDENING}
    bare = edited(
        _without(graph, FLOW_LOG, DEFAULT_SG, BUCKET_POLICY, WAF_LOGGING),
        [(LOAD_BALANCER, None, {"accessLogs": DELETE})],
    )
    stripped = _violations(stack, bare)
    vpcs = [r.name for r in graph.resources if r.type == VPC]
    buckets = [r.name for r in graph.resources if r.type == "aws:s3/bucket:Bucket"]
    assert vpcs or buckets, "an example with neither a VPC nor a bucket tests nothing here"
    assert len(stripped["security-vpc-flow-logs"]) == len(vpcs)
    assert all("has no flow log" in m for m in stripped["security-vpc-flow-logs"])
    assert len(stripped["security-default-sg-closed"]) == len(vpcs)
    assert len(stripped["security-s3-tls-only"]) == len(buckets)
    balancers, acls = graph.of_type(LOAD_BALANCER), graph.of_type(WEB_ACL)
    assert len(stripped["security-lb-waf-logging"]) == len(balancers) + len(acls)


@pytest.mark.parametrize("stack", ["llm-train", "chat-serve"])
def test_flow_logs_go_to_a_bucket_as_the_vpc_guide_grants(stack: str) -> None:
    """Amazon VPC UG, "Amazon S3 bucket permissions for flow logs": delivery.logs.amazonaws.com may PutObject under
    AWSLogs/<account>/ with bucket-owner-full-control and GetBucketAcl/ListBucket on the bucket, for this account
    only (aws:SourceAccount); no role (CreateFlowLogs needs DeliverLogsPermissionArn only for CloudWatch Logs)."""
    graph = example_graph(stack)
    accounts = {json.loads(p.inputs["allowedAccountIds"])[0] for p in graph.of_type("pulumi:providers:aws")}
    logs = graph.of_type(FLOW_LOG)
    assert len(logs) == len(graph.of_type(VPC)) >= 1
    for log in logs:
        assert (log.inputs["trafficType"], log.inputs["logDestinationType"]) == ("ALL", "s3")
        assert "iamRoleArn" not in log.inputs
    policies = [p for p in graph.of_type(BUCKET_POLICY) if p.name.endswith("-flow-logs-policy")]
    assert len(policies) == len(logs)
    for policy in policies:
        by_sid = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
        write, check = by_sid["AWSLogDeliveryWrite"], by_sid["AWSLogDeliveryAclCheck"]
        assert write["Principal"] == check["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
        bucket, account = write["Resource"].split(":::")[1].split("/")[0], write["Condition"]["StringEquals"]
        assert len(bucket) <= 63 and bucket.endswith("-vpc-flow-logs")
        assert write["Resource"] == f"arn:aws:s3:::{bucket}/AWSLogs/{account['aws:SourceAccount']}/*"
        assert account["s3:x-amz-acl"] == "bucket-owner-full-control" and account["aws:SourceAccount"] in accounts
        assert set(check["Action"]) == {"s3:GetBucketAcl", "s3:ListBucket"}
        assert check["Resource"] == f"arn:aws:s3:::{bucket}"
        assert by_sid["DenyInsecureTransport"]["Effect"] == "Deny"
    expiry = [
        rule["expiration"]["days"]
        for r in graph.of_type(LIFECYCLE)
        for rule in r.inputs["rules"]
        if rule["id"] == "expire-flow-logs"
    ]
    assert expiry == [365] * len(logs)
    for group in graph.of_type(DEFAULT_SG):
        assert group.inputs.get("ingress", []) == [] and group.inputs.get("egress", []) == []


@pytest.mark.parametrize("stack", ["llm-train", "chat-serve"])
def test_flow_logs_to_cloudwatch_follow_the_vpc_guide(stack: str) -> None:
    """`flow_logs: cloud-watch-logs`, Amazon VPC UG "Publish flow logs to CloudWatch Logs": the role trusts
    vpc-flow-logs.amazonaws.com (for this account only, aws:SourceAccount) and may create streams and put events
    in the group."""
    from helpers import graph_for

    graph = graph_for(stack, TO_LOG_GROUPS)
    accounts = {json.loads(p.inputs["allowedAccountIds"])[0] for p in graph.of_type("pulumi:providers:aws")}
    logs = graph.of_type(FLOW_LOG)
    assert {log.inputs["logDestinationType"] for log in logs} == {"cloud-watch-logs"}
    assert not [p for p in graph.of_type(BUCKET_POLICY) if p.name.endswith("-flow-logs-policy")]
    roles = [r for r in graph.of_type("aws:iam/role:Role") if r.name.endswith("-flow-logs")]
    assert len(roles) == len(logs)
    for role in roles:
        (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        assert trust["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
        assert trust["Condition"]["StringEquals"]["aws:SourceAccount"] in accounts
    for policy in (p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("-flow-logs")):
        write = next(s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Sid"] == "FlowLogDelivery")
        assert {"logs:CreateLogStream", "logs:PutLogEvents"} <= set(write["Action"])
        assert all(r.startswith("arn:aws:logs:") for r in write["Resource"])


def test_a_long_name_keeps_its_flow_log_bucket_within_s3s_limit() -> None:
    """S3 bucket names are 3-63 characters; a cut name keeps a digest of the whole so two long names differ."""
    from gpuinfra.pulumi.components.vpc_logs import bucket_name

    assert bucket_name("llm-train-net", "111111111111") == "llm-train-net-111111111111-vpc-flow-logs"
    first = bucket_name("a-fleet-name-of-thirty-two-chars-ap-southeast-3-net", "111111111111")
    second = bucket_name("a-fleet-name-of-thirty-two-chars-ap-southeast-2-net", "111111111111")
    assert max(len(first), len(second)) <= 63 and first != second
    assert first.endswith("-111111111111-vpc-flow-logs") and first.startswith("a-fleet-name-of")


def test_alb_log_bucket_grants_the_regions_elb_account_only_its_own_prefix() -> None:
    """ELB UG step 2: s3:PutObject on <bucket>/<prefix>/AWSLogs/<account>/* to the region's ELB account; us-east-1's
    is 127311923021 and eu-central-1's 054676820928 (terraform-provider-aws aws_elb_service_account)."""
    graph = example_graph("chat-serve")
    expected = {"us-east-1": "127311923021", "eu-central-1": "054676820928"}
    for region, elb in expected.items():
        policy = graph.named(BUCKET_POLICY, f"chat-serve-{region}-endpoint-access-logs-policy")
        grant = next(s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Sid"] == "ElbAccessLogs")
        assert grant["Principal"] == {"AWS": f"arn:aws:iam::{elb}:root"} and grant["Action"] == "s3:PutObject"
        assert grant["Resource"].endswith("-lb/lb/AWSLogs/222222222222/*"), grant["Resource"]
        assert len(grant["Resource"].split(":::")[1].split("/")[0]) <= 63


def test_the_elb_grant_is_the_only_cross_account_grant_a_log_bucket_may_carry() -> None:
    """Widened to the whole bucket, the ELB account's grant is an ordinary cross-account grant again."""
    policy = "chat-serve-us-east-1-endpoint-access-logs-policy"
    graph = example_graph("chat-serve")
    document = json.loads(graph.named(BUCKET_POLICY, policy).inputs["policy"])
    for statement in document["Statement"]:
        if statement["Sid"] == "ElbAccessLogs":
            statement["Resource"] = statement["Resource"].split("/")[0] + "/*"
    run = police(
        edited(graph, [(BUCKET_POLICY, policy, {"policy": json.dumps(document)})]),
        facts_for("chat-serve"),
        pack_config(),
    )
    found = [v.message for v in run.violations if v.rule == "separation-cross-account-grants"]
    assert found and all("127311923021" in m for m in found), found


def test_nlb_logs_and_newer_regions_use_the_service_principals() -> None:
    """NLB access logs are vended logs (delivery.logs.amazonaws.com, PutObject with bucket-owner-full-control and
    GetBucketAcl); a region missing from the ELB account table (opened since August 2022) gets
    logdelivery.elasticloadbalancing.amazonaws.com."""
    from gpuinfra.graph.log_delivery import elb_log_principal
    from gpuinfra.pulumi.components.inference.access_logs import delivery_statements

    write, acl = delivery_statements("b", "222222222222", "us-east-1", alb=False)
    assert write["Principal"] == acl["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert write["Resource"] == "arn:aws:s3:::b/lb/AWSLogs/222222222222/*"
    assert write["Condition"]["StringEquals"]["s3:x-amz-acl"] == "bucket-owner-full-control"
    assert (acl["Action"], acl["Resource"]) == ("s3:GetBucketAcl", "arn:aws:s3:::b")
    assert elb_log_principal("ap-southeast-5") == {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}
    assert elb_log_principal("us-west-2") == {"AWS": "arn:aws:iam::797873946194:root"}


def test_log_retention_is_a_spec_switch() -> None:
    """`log_retention_days` sets the flow-log buckets' (or groups') and the access-log buckets' expiry and the WAF
    log groups' retention."""
    from helpers import graph_for

    def expiry(graph: Graph, rule_id: str) -> list[int]:
        rules = [rule for r in graph.of_type(LIFECYCLE) for rule in r.inputs["rules"]]
        return [rule["expiration"]["days"] for rule in rules if rule["id"] == rule_id]

    training = graph_for("llm-train", {"log_retention_days": 30})
    assert expiry(training, "expire-flow-logs") == [30]
    in_groups = graph_for("llm-train", {"log_retention_days": 30, **TO_LOG_GROUPS})
    assert {g.inputs["retentionInDays"] for g in in_groups.of_type(LOG_GROUP)} == {30}
    serving = graph_for("chat-serve", {"log_retention_days": 90})
    assert {g.inputs["retentionInDays"] for g in serving.of_type(LOG_GROUP)} == {90}
    assert expiry(serving, "expire-access-logs") == [90] * len(serving.of_type(LOAD_BALANCER))
    assert expiry(serving, "expire-flow-logs") == [90] * len(serving.of_type(VPC))


def test_a_retention_cloudwatch_refuses_is_an_input_error(tmp_path: Path) -> None:
    """45 is not among PutRetentionPolicy's values: exit 2 naming the field, no traceback."""
    from helpers import ROOT, gpuinfra

    text = (ROOT / "stacks" / "Pulumi.llm-train.yaml").read_text()
    stack = tmp_path / "Pulumi.llm-train.yaml"
    stack.write_text(text.replace("  gpuinfra:training:\n", "  gpuinfra:training:\n    log_retention_days: 45\n", 1))
    (tmp_path / "org.yaml").write_text((ROOT / "stacks" / "org.yaml").read_text())
    done = gpuinfra("validate", str(stack))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "log_retention_days" in done.stderr and "Traceback" not in done.stderr


def test_a_tls_nlb_of_a_kubernetes_fleet_logs_to_its_regions_bucket() -> None:
    """An NLB writes access logs for TLS listeners only (ELB NLB guide, "Access logs"); the AWS Load Balancer
    Controller turns them on from the Service's aws-load-balancer-attributes (annotations.md). Each region's
    bucket grants vended-log delivery (delivery.logs.amazonaws.com) under lb/AWSLogs/<account>/, and the Service
    waits for that policy (ELB checks it when logging is turned on)."""
    graph = example_graph("chat-serve-k8s")
    for region in ("us-east-1", "eu-central-1"):
        service = graph.named(K8S_SERVICE, f"chat-k8s-{region}-service")
        attributes = service.inputs["metadata"]["annotations"][
            "service.beta.kubernetes.io/aws-load-balancer-attributes"
        ]
        pairs = dict(p.split("=", 1) for p in attributes.split(","))
        bucket = f"chat-k8s-222222222222-{region}-lb"
        assert pairs == {
            "access_logs.s3.enabled": "true",
            "access_logs.s3.bucket": bucket,
            "access_logs.s3.prefix": "lb",
        }
        policy = graph.named(BUCKET_POLICY, f"chat-k8s-{region}-access-logs-policy")
        assert policy.urn in service.dependencies
        by_sid = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
        write = by_sid["AWSLogDeliveryWrite"]
        assert write["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
        assert write["Resource"] == f"arn:aws:s3:::{bucket}/lb/AWSLogs/222222222222/*"
