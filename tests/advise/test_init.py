"""`advise --init` writes the stacks the answer needs, through init (project, organization file, schemas), the
training cluster and the serving fleet in separate accounts; for the high-traffic service and the new 70B model
those stacks pass `validate` and `preview` as written (issue 52)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.spec import read_stack
from helpers import ROOT, gpuinfra

INTENTS = ROOT / "stacks" / "intents"


def init(intent: str, folder: Path) -> list[str]:
    result = gpuinfra("advise", str(INTENTS / f"{intent}.yaml"), "--init", "--dir", str(folder), cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    return [line.split()[-1] for line in result.stderr.splitlines() if line.startswith("  gpuinfra preview ")]


@pytest.mark.parametrize(("intent", "stacks"), [("chat-service", 1), ("new-70b", 3)])
def test_the_stacks_advise_writes_pass_validate_and_preview(intent: str, stacks: int, tmp_path: Path) -> None:
    project = tmp_path / "infra"
    names = init(intent, project)
    assert len(names) == stacks
    accounts = set()
    for name in names:
        path = project / "stacks" / f"Pulumi.{name}.yaml"
        assert "written by `gpuinfra init`" in path.read_text().splitlines()[1]
        accounts.add(read_stack(path).spec.account)
        for command in ("validate", "preview"):
            result = gpuinfra(command, name, cwd=project)
            assert result.returncode == 0, f"{command} {name}\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
    assert len(accounts) == stacks  # the cluster, the fleet and the corpus's preparation never share an account


def test_the_sizes_are_the_advices(tmp_path: Path) -> None:
    project = tmp_path / "infra"
    init("new-70b", project)
    train = read_stack(project / "stacks" / "Pulumi.new-70b-train.yaml").spec
    json_advice = gpuinfra("advise", str(INTENTS / "new-70b.yaml"), "--format", "json", cwd=tmp_path)
    assert f'"nodes": {train.compute.node_count},' in json_advice.stdout  # type: ignore[union-attr]
    assert train.account == "ml-training" and train.run.target_days == 60  # type: ignore[union-attr]


def test_the_named_corpus_is_prepared_in_its_own_account_for_the_training_cluster(tmp_path: Path) -> None:
    """new-70b names 40 TB of raw text: `--init` writes its dataprep stack (init's `dataprep` workload) with the
    corpus the advice planned (40 TB of WARC at one Common Crawl snapshot's 90,000 files in 60 TB: 60,000 files),
    in the organization's dataprep account, its shards granted to the account the training cluster is in."""
    project = tmp_path / "infra"
    names = init("new-70b", project)
    assert "new-70b-prep" in names
    prep = read_stack(project / "stacks" / "Pulumi.new-70b-prep.yaml").spec
    train = read_stack(project / "stacks" / "Pulumi.new-70b-train.yaml").spec
    assert (prep.corpus.size_tb, prep.corpus.files) == (40, 40 * 90_000 // 60)  # type: ignore[union-attr]
    assert prep.output.readers == [train.account] == ["ml-training"]  # type: ignore[union-attr]
    org = (project / "stacks" / "org.yaml").read_text()
    assert "ml-dataprep:" in org and "purpose: dataprep" in org
    assert prep.account == "ml-dataprep"
    # the bill's data-preparation line is the written stack's own plan: `validate` on it gives the same run
    checked = gpuinfra("validate", "new-70b-prep", "--format", "json", cwd=project)
    assert checked.returncode == 0, checked.stderr
    (report,) = json.loads(checked.stdout)["stacks"]
    advice = json.loads(gpuinfra("advise", str(INTENTS / "new-70b.yaml"), "--format", "json", cwd=tmp_path).stdout)
    assert report["plan"]["hours"] == advice["dataprep"]["hours"]
    assert Decimal(report["plan"]["cost_usd"]) == Decimal(advice["dataprep"]["cost_usd"])
    line = next(b for b in advice["bill"]["lines"] if b["what"].startswith("data preparation"))
    assert line["kind"] == "one-off" and Decimal(line["usd"]) == Decimal(report["plan"]["cost_usd"])


def test_a_managed_api_answer_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "infra"
    assert init("chat-bot", project) == []
    assert not project.exists()


def test_an_existing_organization_file_is_kept_and_its_missing_grants_listed(tmp_path: Path) -> None:
    project = tmp_path / "infra"
    init("chat-service", project)
    org = project / "stacks" / "org.yaml"
    before = org.read_text()
    granted = re.search(r"us-east-1:\n\s+L-DB2E81BA: (\d+)", before)
    assert granted is not None
    need = granted.group(1)  # what init granted: the stacks' need
    org.write_text(before.replace(f"L-DB2E81BA: {need}", "L-DB2E81BA: 8", 1))
    result = gpuinfra(
        "advise", str(INTENTS / "chat-service.yaml"), "--init", "--force", "--dir", str(project), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lacks = f"the organization file lacks accounts.ml-inference.quotas.us-east-1.L-DB2E81BA: {need} vCPUs needed, 8"
    assert lacks in result.stderr, result.stderr
    assert "L-DB2E81BA: 8" in org.read_text()  # never rewritten
