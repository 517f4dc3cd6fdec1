"""One verdict path: `diff` judges the head the way `preview` does (--policy-config, --suppress), a head that cannot
be read or that fails exits non-zero with a headline that says so, and money of an unreadable side is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuinfra.errors import verdict
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
