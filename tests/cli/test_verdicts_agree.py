"""Where a validator and a policy judge one concern, they reach one verdict: for each pair's failing case the
validator gives an ERROR (so `validate` exits 1) and the policy a mandatory violation on the graph the program
builds from the same input (so `preview`, and CI's `pulumi preview --policy-pack`, refuse it too); for the
passing case neither fires. And `validate` and `preview` exit with the same code on each case."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from gpuinfra.commands.preview import preview_checked
from gpuinfra.commands.validate import to_report
from gpuinfra.cost import Usage
from gpuinfra.policy.pack import pack_config, police_stack
from gpuinfra.pulumi.preview import preview_graph
from gpuinfra.report.model import Report
from gpuinfra.validators.base import Level
from helpers import checked

LOW_P_QUOTA = {"accounts.ml-training.quotas.us-east-1.L-417A185B": 512}
"""The llm-train example needs 3072 on-demand P vCPUs (16 p5.48xlarge x 192 on its reservation); 512 is short."""
BEFORE_T15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}
"""llm-train before the review's finding T15: 4 on-demand nodes and 12 spot, no elastic partition."""


@dataclass(frozen=True)
class Pair:
    rule: str
    policy: str
    stack: str
    spec: dict[str, Any] = field(default_factory=dict)
    org: dict[str, Any] = field(default_factory=dict)
    fires: bool = True

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.policy}-{'fails' if self.fires else 'passes'}-{self.stack}-" + ",".join(
            [*self.spec, *self.org]
        )


PAIRS = [
    Pair("quota-short", "quota-within-grant", "llm-train", org=LOW_P_QUOTA),
    # the same shortfall, asked of AWS by the stack itself (request_quota_increases): neither layer blocks, because
    # the request asks for the account's total (llm-train 3072 + llm-train-eks 768 + llm-finetune 16), which the
    # policy counts too.
    Pair(
        "quota-short",
        "quota-within-grant",
        "llm-train",
        org={**LOW_P_QUOTA, "accounts.ml-training.request_quota_increases": True},
        fires=False,
    ),
    Pair("quota-short", "quota-within-grant", "llm-train", fires=False),
    # 32 DGX H100 systems hold 256 GPUs; the site allots 128
    Pair(
        "site-gpus-exceed-allotment",
        "quota-site-gpus",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.gpu_allotment": 128},
    ),
    Pair("site-gpus-exceed-allotment", "quota-site-gpus", "llm-train-onprem", fires=False),
    Pair(
        "endpoint-without-certificate", "security-https-listeners", "chat-serve", {"regions[0].certificate_arn": None}
    ),
    Pair(
        "endpoint-without-certificate",
        "security-https-listeners",
        "chat-serve",
        {"regions[0].certificate_arn": None, "load_balancer.type": "nlb"},
    ),
    Pair(
        "endpoint-without-certificate",
        "security-https-listeners",
        "chat-serve-k8s",
        {"regions[1].certificate_arn": None},
    ),
    Pair("endpoint-without-certificate", "security-https-listeners", "chat-serve-k8s", fires=False),
    Pair("account-purpose-mismatch", "separation-accounts", "chat-serve", {"account": "ml-training"}),
    Pair("account-purpose-mismatch", "separation-accounts", "chat-serve", fires=False),
    Pair(
        "spot-checkpoint-interval-too-long",
        "training-spot-checkpointing",
        "llm-train",
        {"checkpointing.interval_minutes": 1400, **BEFORE_T15},
    ),
    Pair("spot-checkpoint-interval-too-long", "training-spot-checkpointing", "llm-train", BEFORE_T15, fires=False),
    # the example's gang is on its reservation: its elastic spot nodes run other jobs, which no interval bounds
    Pair(
        "spot-checkpoint-interval-too-long",
        "training-spot-checkpointing",
        "llm-train",
        {"checkpointing.interval_minutes": 1400},
        fires=False,
    ),
]
POLICIES = pack_config()


@pytest.mark.parametrize("pair", PAIRS, ids=[(p.values[0] if hasattr(p, "values") else p).id for p in PAIRS])
def test_validator_and_policy_share_the_verdict(pair: Pair) -> None:
    result = checked(pair.stack, pair.spec, pair.org)
    errors = {f.rule for f in result.findings if f.level == Level.ERROR}
    assert (pair.rule in errors) == pair.fires, [f.message for f in result.findings]
    # the policy judges the graph the program builds from the same input (preview stops at the validator's
    # error, so the graph is built here as `pulumi preview` would build it)
    graph = preview_graph(result.inputs, result.plan)
    run = police_stack(result.inputs, result.plan, graph, POLICIES)
    mandatory = {v.rule for v in run.mandatory}
    assert (pair.policy in mandatory) == pair.fires, [v.message for v in run.violations]
    # and the two commands exit alike: 1 when the pair fires, 0 otherwise
    validated = Report(command="validate", stacks=[to_report(result)])
    previewed = Report(command="preview", stacks=[preview_checked(result, Usage(), POLICIES)[0]])
    assert validated.exit_code == previewed.exit_code == (1 if pair.fires else 0)
