"""Both Google workloads' project rules (gcp-project-purpose, gcp-training-project-purpose) share one check
(clouds/gcp/validators/project.py); each keeps its own words. The messages and hints below are the rules' own as
they stood before the check was shared, so a change to either is seen here."""

from __future__ import annotations

import pytest
from helpers import checked

SERVE, TRAIN = "chat-serve-gcp", "llm-train-gcp"


@pytest.mark.parametrize(
    ("stack", "rule", "account", "message", "hint"),
    [
        (
            SERVE,
            "gcp-project-purpose",
            "ml-inference",
            "account 'ml-inference' is an AWS account, not a Google Cloud project",
            "name an organization entry with `cloud: gcp` in `account` (docs/gcp.md), or remove `cloud: gcp` to serve "
            "on AWS",
        ),
        (
            SERVE,
            "gcp-project-purpose",
            "gcp-research",
            "project 'gcp-research' (acme-train-prod) is a training project: an inference fleet never shares a "
            "project with training (separation)",
            "name a project of `purpose: inference` in `account`",
        ),
        (
            TRAIN,
            "gcp-training-project-purpose",
            "ml-inference",
            "account 'ml-inference' is an AWS account, not a Google Cloud project",
            "name an organization entry with cloud: gcp (docs/gcp-training.md), or drop cloud: gcp to train on AWS",
        ),
        (
            TRAIN,
            "gcp-training-project-purpose",
            "gcp-chat",
            "project 'gcp-chat' (acme-serve-prod) is an inference project: training and serving never share a "
            "project (separation)",
            "name a Google project of `purpose: training` in `account:` (training and serving never share one)",
        ),
    ],
)
def test_each_workload_keeps_its_words(stack: str, rule: str, account: str, message: str, hint: str) -> None:
    found = [f for f in checked(stack, {"account": account}).findings if f.rule == rule]
    assert [(f.message, f.hint, f.path) for f in found] == [(message, hint, ("account",))]


@pytest.mark.parametrize(("stack", "rule"), [(SERVE, "gcp-project-purpose"), (TRAIN, "gcp-training-project-purpose")])
def test_the_example_projects_pass(stack: str, rule: str) -> None:
    assert not [f for f in checked(stack).findings if f.rule == rule]
