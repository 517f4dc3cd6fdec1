"""The PCS cluster's scheduler and job completion logs: vended-log delivery into a log group of the stack's own
(components/training/pcs_logs.py), judged as AWS would judge the delivery's writes, and priced.

Expected values come from the upstream pages, not from the code under test:
- log types: AWS PCS User Guide, "Scheduler logs in AWS PCS" (PCS_SCHEDULER_LOGS) and botocore 1.44.18's logs
  model, PutDeliverySourceRequest.logType ("For PCS, the valid values are PCS_SCHEDULER_LOGS, PCS_JOBCOMP_LOGS,
  ..."), the type "Job completion logs in AWS PCS" describes;
- the group policy: CloudWatch Logs User Guide, "Logs sent to CloudWatch Logs" (delivery.logs.amazonaws.com may
  logs:CreateLogStream and logs:PutLogEvents, conditioned on aws:SourceAccount and aws:SourceArn);
- the price: $0.50 per GB delivered to CloudWatch Logs, first tier (catalog source aws-samples-vended-logs).
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.cost import ResourceUsage, Usage, UsageFile, price_graph
from gpuinfra.graph import Graph, tokens
from gpuinfra.graph.flows import Flow
from gpuinfra.plan import build_plan
from gpuinfra.preflight.access.judge import judge_flows
from gpuinfra.pulumi.components.flows import declared_flows
from helpers import example_graph, graph_for, inputs_for

ACCOUNT = "111111111111"  # the example organization's ml-training account
GROUP_ARN = f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/aws/vendedlogs/pcs/llm-train"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("llm-train")


def delivery_flows() -> list[Flow]:
    inputs = inputs_for("llm-train")
    flows = declared_flows(inputs, build_plan(inputs.spec, inputs.org.org, load_catalog()))
    return [f for f in flows if f.principal == "delivery.logs.amazonaws.com"]


def without(graph: Graph, *types: str) -> Graph:
    return Graph.of(graph.stack, graph.project, [r for r in graph.resources if r.type not in types])


def test_one_source_per_pcs_log_type_on_the_cluster(graph: Graph) -> None:
    cluster = graph.one(tokens.PCS_CLUSTER)
    sources = graph.of_type(tokens.LOG_DELIVERY_SOURCE)
    assert sorted(s.inputs["logType"] for s in sources) == ["PCS_JOBCOMP_LOGS", "PCS_SCHEDULER_LOGS"]
    for source in sources:
        assert cluster.urn in source.dependencies  # resourceArn is the cluster's ARN output
        assert source.inputs["resourceArn"].startswith(f"arn:aws:pcs:us-east-1:{ACCOUNT}:cluster/")


def test_the_destination_is_the_stack_s_log_group_kept_as_the_spec_says(graph: Graph) -> None:
    (group,) = [g for g in graph.of_type(tokens.LOG_GROUP) if g.inputs.get("name") == "/aws/vendedlogs/pcs/llm-train"]
    assert group.inputs["retentionInDays"] == 365  # the spec's log_retention_days default
    (destination,) = graph.of_type(tokens.LOG_DELIVERY_DESTINATION)
    assert destination.inputs["deliveryDestinationConfiguration"] == {"destinationResourceArn": GROUP_ARN}
    assert group.urn in destination.dependencies


def test_each_delivery_pairs_a_source_with_the_destination_after_the_group_policy(graph: Graph) -> None:
    (destination,) = graph.of_type(tokens.LOG_DELIVERY_DESTINATION)
    (policy,) = graph.of_type(tokens.LOG_RESOURCE_POLICY)
    sources = {s.inputs["name"]: s for s in graph.of_type(tokens.LOG_DELIVERY_SOURCE)}
    deliveries = graph.of_type(tokens.LOG_DELIVERY)
    assert sorted(d.inputs["deliverySourceName"] for d in deliveries) == sorted(sources)
    for d in deliveries:
        assert {destination.urn, sources[d.inputs["deliverySourceName"]].urn, policy.urn} <= set(d.dependencies)


def test_the_group_policy_is_the_guide_s_on_this_group_only(graph: Graph) -> None:
    (policy,) = graph.of_type(tokens.LOG_RESOURCE_POLICY)
    assert policy.inputs["resourceArn"] == GROUP_ARN
    assert "policyName" not in policy.inputs  # group-scoped, not one of the account's ten
    (statement,) = json.loads(policy.inputs["policyDocument"])["Statement"]
    assert statement["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert statement["Resource"] == f"{GROUP_ARN}:log-stream:*"
    assert statement["Condition"] == {
        "StringEquals": {"aws:SourceAccount": ACCOUNT},
        "ArnLike": {"aws:SourceArn": f"arn:aws:logs:us-east-1:{ACCOUNT}:*"},
    }


def test_the_delivery_writes_are_declared_flows_and_allowed(graph: Graph) -> None:
    flows = delivery_flows()
    assert {(f.action, f.name.split()[1]) for f in flows} == {
        (a, t)
        for a in ("logs:CreateLogStream", "logs:PutLogEvents")
        for t in ("PCS_SCHEDULER_LOGS", "PCS_JOBCOMP_LOGS")
    }
    judged = judge_flows(flows, [graph])
    assert [j.decision.outcome for j in judged] == ["allow"] * 4, [j.decision.reason for j in judged]


def test_without_the_group_policy_the_flows_cannot_be_judged_allowed(graph: Graph) -> None:
    judged = judge_flows(delivery_flows(), [without(graph, tokens.LOG_RESOURCE_POLICY)])
    assert {j.decision.outcome for j in judged} == {"unknown"}


def test_a_group_policy_for_another_account_denies_the_delivery(graph: Graph) -> None:
    (policy,) = graph.of_type(tokens.LOG_RESOURCE_POLICY)
    doc = json.loads(policy.inputs["policyDocument"])
    doc["Statement"][0]["Condition"]["StringEquals"]["aws:SourceAccount"] = "222222222222"
    changed = dataclasses.replace(policy, inputs={**policy.inputs, "policyDocument": json.dumps(doc)})
    g = Graph.of(graph.stack, graph.project, [changed if r.urn == policy.urn else r for r in graph.resources])
    judged = judge_flows(delivery_flows(), [g])
    assert {j.decision.outcome for j in judged} == {"deny"}


def test_the_delivered_logs_are_priced_per_gb_on_the_group_and_unknown_without_usage(graph: Graph) -> None:
    catalog = load_catalog()
    key = f"{tokens.LOG_GROUP}::llm-train-slurm-logs"
    (delivered, _storage) = price_graph(graph, catalog).get(key).lines
    assert delivered.name == "Vended logs delivered" and delivered.monthly is None  # unknown, never zero
    usage = Usage(UsageFile(resource_usage={"llm-train-slurm-logs": ResourceUsage(monthly_ingested_gb=Decimal(40))}))
    (delivered, _storage) = price_graph(graph, catalog, usage).get(key).lines
    assert delivered.monthly == Decimal("20.00")  # 40 GB x $0.50
    for free in (tokens.LOG_DELIVERY, tokens.LOG_DELIVERY_SOURCE, tokens.LOG_DELIVERY_DESTINATION):
        for r in graph.of_type(free):
            assert price_graph(graph, catalog).get(r.key).free


def test_eks_training_stacks_deliver_no_pcs_logs() -> None:
    g = graph_for("llm-train-eks")
    assert g.of_type(tokens.LOG_DELIVERY_SOURCE, tokens.LOG_DELIVERY, tokens.LOG_RESOURCE_POLICY) == []


def test_a_role_writing_a_log_group_is_judged_by_its_identity_policy(graph: Graph) -> None:
    """Within one account a role needs no resource policy (IAM UG, "Policy evaluation logic"): no group policy is
    no reason for 'unknown'. The node role has no logs:PutLogEvents, so AWS would deny it (judged without the
    AWS-managed SSM policy, whose text is not in the graph)."""
    own = without(graph, tokens.LOG_RESOURCE_POLICY, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    write = Flow(
        "node writes the group", "llm-train", "llm-train-slurm-role", "logs:PutLogEvents", f"{GROUP_ARN}:log-stream:x"
    )
    (judged,) = judge_flows([write], [own])
    assert judged.decision.outcome == "deny", judged.decision.reason
