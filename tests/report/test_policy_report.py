"""The policy section of the report: verdicts sorted mandatory first, a status per policy, exit codes."""

from __future__ import annotations

from gpuinfra.commands.validate import to_report
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.report.build.stack import graph_report, policy_report
from gpuinfra.report.model import Report
from gpuinfra.report.render.markdown import render_markdown
from gpuinfra.report.render.table import render_table
from helpers import checked, example_graph
from policy_helpers import edited, facts_for

LT = "aws:ec2/launchTemplate:LaunchTemplate"
OD_LT = (LT, "llm-train-slurm-pcs-od-lt")


def report_for(edits: tuple = (), config: dict | None = None) -> Report:  # type: ignore[type-arg]
    graph = edited(example_graph("llm-train"), edits)
    run = police(graph, facts_for("llm-train"), pack_config(given=config or {}))
    stack = policy_report(graph_report(to_report(checked("llm-train")), graph), run, graph)
    return Report(command="preview", stacks=[stack])


def test_statuses_and_order() -> None:
    report = report_for(
        ((*OD_LT, {"metadataOptions.httpTokens": "optional", "blockDeviceMappings[0].ebs.encrypted": "false"}),),
        {"security-ebs-encrypted": "advisory", "security-open-ingress": "disabled"},
    )
    policy = report.stacks[0].policy
    assert policy is not None
    assert [(v.level, v.policy, v.resource_name) for v in policy.violations] == [
        ("mandatory", "security-imdsv2", "llm-train-slurm-pcs-od-lt"),
        ("advisory", "security-ebs-encrypted", "llm-train-slurm-pcs-od-lt"),
    ]
    status = {p.name: (p.status, p.violations, p.reason) for p in policy.policies}
    assert status["security-imdsv2"] == ("failed", 1, None)
    assert status["security-open-ingress"] == ("disabled", 0, None)
    assert status["inference-multi-zone"] == (
        "not-applicable",
        0,
        "applies to inference stacks; llm-train is a training stack",
    )
    assert status["security-https-listeners"] == ("not-applicable", 0, "no resource of the types it judges")
    assert status["quota-within-grant"] == ("passed", 0, None)
    assert report.exit_code == 1


def test_advisory_violations_do_not_fail_the_run() -> None:
    report = report_for(((*OD_LT, {"metadataOptions.httpTokens": "optional"}),), {"security-imdsv2": "advisory"})
    assert report.exit_code == 0
    table = render_table(report)
    assert "policies (gpuinfra pack):" in table and "1 failed" in table and "advisory" in table
    markdown = render_markdown(report)
    assert "| advisory | `security-imdsv2` | `llm-train-slurm-pcs-od-lt` |" in markdown
    assert "| `security-imdsv2` | advisory | failed (1) |" in markdown
