"""One verdict path: `diff` judges the head the way `preview` does (--policy-config, --suppress), a head that cannot
be read or that fails exits non-zero with a headline that says so, and money of an unreadable side is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuinfra.findings import verdict
from gpuinfra.policy.pack import pack_config
from helpers import gpuinfra

NAT = {
    "urn": "urn:pulumi:s::gpuinfra::aws:ec2/natGateway:NatGateway::nat",
    "type": "aws:ec2/natGateway:NatGateway",
    "name": "nat",
    "inputs": {"subnetId": "subnet-0123"},
}


def document(tmp_path: Path, name: str, stacks: list[dict[str, Any]], problems: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"version": 1, "command": "preview", "stacks": stacks, "problems": list(problems)}))
    return path


def stack(*violations: dict[str, str], findings: list[dict[str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"stack": "s", "resources": [NAT], "findings": list(findings), "policy": {"violations": list(violations)}}


def open_ingress(level: str) -> dict[str, str]:
    return {"policy": "security-open-ingress", "level": level, "resource_name": "nat", "message": "open to the world"}


def test_a_head_that_cannot_be_read_exits_2_and_its_money_is_unknown(tmp_path: Path) -> None:
    base = document(tmp_path, "base", [stack()])
    head = document(tmp_path, "head", [], [{"stack": "s", "messages": ["Pulumi.s.yaml: line 3: not YAML"]}])
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert done.returncode == 2, done.stderr
    heading = done.stdout.splitlines()[1]
    assert heading == "## gpuinfra: ❌ head cannot be read (s); monthly cost - (unknown)"
    assert "-100%" not in done.stdout and "$0.00 (0%)" not in done.stdout
    report = json.loads(gpuinfra("diff", str(base), str(head), "--format", "json").stdout)
    assert report["monthly"]["after"]["monthly_usd"] is None and report["monthly"]["delta_usd"] is None
    assert report["stacks"][0]["status"] == "not-previewed"


def test_a_head_with_an_error_finding_exits_1_and_says_so(tmp_path: Path) -> None:
    error = {"rule": "spot-checkpoint-interval-too-long", "level": "error", "path": "checkpointing", "message": "m"}
    base = document(tmp_path, "base", [stack()])
    head = document(tmp_path, "head", [stack(findings=[error])])
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert done.returncode == 1
    assert done.stdout.splitlines()[1].startswith("## gpuinfra: ❌ 1 blocking; monthly cost")


def test_policy_config_changes_the_verdict_as_it_does_for_preview(tmp_path: Path) -> None:
    base = document(tmp_path, "base", [stack()])
    head = document(tmp_path, "head", [stack(open_ingress("advisory"))])
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"security-open-ingress": "mandatory"}))
    off = tmp_path / "off.json"
    off.write_text(json.dumps({"security-open-ingress": "disabled"}))
    assert gpuinfra("diff", str(base), str(head), "--format", "json").returncode == 0
    done = gpuinfra("diff", str(base), str(head), "--format", "json", "--policy-config", str(strict))
    assert done.returncode == 1, done.stderr
    (finding,) = [f for s in json.loads(done.stdout)["stacks"] for f in s["findings"]]
    # preview reads the same file into the same reconciled config, and the same rule decides
    level = pack_config(strict)["security-open-ingress"].level
    assert finding["level"] == level == "mandatory" and verdict(False, [level]) == 1
    quiet = gpuinfra("diff", str(base), str(head), "--format", "json", "--policy-config", str(off))
    assert quiet.returncode == 0 and not [f for s in json.loads(quiet.stdout)["stacks"] for f in s["findings"]]


def test_suppress_silences_a_warning_but_never_an_error(tmp_path: Path) -> None:
    warning = {"rule": "lustre-capacity-rounded", "level": "warning", "path": "compute", "message": "m"}
    base = document(tmp_path, "base", [stack()])
    head = document(tmp_path, "head", [stack(findings=[warning])])
    shown = json.loads(gpuinfra("diff", str(base), str(head), "--format", "json").stdout)
    silenced = gpuinfra("diff", str(base), str(head), "--format", "json", "--suppress", "lustre-capacity-rounded")
    assert [f["rule"] for s in shown["stacks"] for f in s["findings"]] == ["lustre-capacity-rounded"]
    assert silenced.returncode == 0 and not [f for s in json.loads(silenced.stdout)["stacks"] for f in s["findings"]]
    typo = gpuinfra("diff", str(base), str(head), "--suppress", "no-such-rule")
    assert typo.returncode == 2 and "no-such-rule" in typo.stderr


def _not_previewed(findings: list[dict[str, str]]) -> dict[str, Any]:
    """A head stack whose preview did not run: no graph, as `preview --format json` writes it."""
    return {"stack": "s", "resources": None, "findings": findings}


STALE = {"rule": "stale-prices", "level": "warning", "path": "", "message": "the oldest price used is old"}


def test_a_head_that_was_not_previewed_is_not_judged_never_resolved(tmp_path: Path) -> None:
    """The base's warning is not "✅ resolved" when the head stopped at an error: nothing judged the head."""
    quota = {"rule": "quota-short", "level": "error", "path": "compute", "message": "needs 1536 vCPUs"}
    base = document(tmp_path, "base", [stack(findings=[STALE])])
    head = document(tmp_path, "head", [_not_previewed([quota])])
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert done.returncode == 1, done.stderr
    assert "✅" not in done.stdout and "| resolved |" not in done.stdout
    assert done.stdout.splitlines()[1].startswith("## gpuinfra: ❌ 1 blocking; ❌ not judged (s); monthly cost")
    row = next(line for line in done.stdout.splitlines() if "`stale-prices`" in line)
    assert row.startswith("| ⏸️ |") and row.endswith("| not-judged |")
    assert (
        "⏸️ **not judged**: its head's preview stopped at 1 blocking finding (quota-short (compute)), so no policy, "
        "preflight or cost judged it" in done.stdout
    )
    report = json.loads(gpuinfra("diff", str(base), str(head), "--format", "json").stdout)
    (s,) = report["stacks"]
    assert s["not_judged"].startswith("its head's preview stopped at 1 blocking finding")
    assert {f["rule"]: f["status"] for f in s["findings"]} == {"quota-short": "new", "stale-prices": "not-judged"}
    table = gpuinfra("diff", str(base), str(head))
    assert "NOT JUDGED: its head's preview stopped" in table.stdout
    assert "  not-judged warning   stale-prices" in table.stdout
    assert not [line for line in table.stdout.splitlines() if line.startswith("  resolved")]


def test_a_head_without_a_graph_and_without_a_finding_fails_the_review(tmp_path: Path) -> None:
    """Nothing blocks on the head, but nothing judged it either: the review fails rather than passing it."""
    base = document(tmp_path, "base", [stack(findings=[STALE])])
    head = document(tmp_path, "head", [_not_previewed([])])
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[1].startswith("## gpuinfra: ❌ not judged (s); monthly cost")
    assert "its head could not be read or previewed, so no policy, preflight or cost judged it" in done.stdout
    assert "✅" not in done.stdout


def test_a_base_that_was_not_previewed_leaves_the_head_judged(tmp_path: Path) -> None:
    """The other direction: a base without a graph and a clean head is an ordinary pass."""
    base = document(tmp_path, "base", [_not_previewed([])])
    head = document(tmp_path, "head", [stack()])
    done = gpuinfra("diff", str(base), str(head), "--format", "json")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["stacks"][0]["not_judged"] is None


ENDPOINT = {
    "urn": "urn:pulumi:s::gpuinfra::aws:sagemaker/endpoint:Endpoint::serve",
    "type": "aws:sagemaker/endpoint:Endpoint",
    "name": "serve",
    "inputs": {"endpointConfigName": "serve-config"},
}


def test_a_review_whose_head_has_an_unknown_price_says_its_totals_are_partial(tmp_path: Path) -> None:
    """The comment's cost headline and the stack's section say "partial" when a line has no price (the review
    showed "+$163.84" for four unpriced p5 nodes, with nothing saying the largest line was left out)."""
    base = document(tmp_path, "base", [stack()])
    head = document(tmp_path, "head", [{**stack(), "resources": [NAT, ENDPOINT]}])
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert "⚠️ **Partial**: a price is unknown in `s`, so these totals are lower bounds" in done.stdout, done.stdout
    assert "(partial: a price is unknown)" in done.stdout
    report = json.loads(gpuinfra("diff", str(base), str(head), "--format", "json").stdout)
    assert report["stacks"][0]["partial"] is True
    quiet = json.loads(gpuinfra("diff", str(base), str(base), "--format", "json").stdout)
    assert quiet["stacks"][0]["partial"] is False
