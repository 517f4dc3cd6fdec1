"""A stack's total as the run that previewed it hands it to the ledger (`ledger.seed`) is the total the ledger
builds from the stack's file (`ledger._built`): the budget policy reads the same figure whether or not the
sibling was previewed in the same run, in the same process, or at all."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.commands.preview import built_stack
from gpuinfra.cost import Usage
from gpuinfra.cost.usage import ResourceUsage, UsageFile
from gpuinfra.policy.rules import ledger
from gpuinfra.workspace.check import check_stack
from helpers import STACKS

AWS_EXAMPLES = ["chat-serve", "chat-serve-k8s", "llm-finetune", "llm-train", "llm-train-eks", "model-registry"]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    ledger._held.cache_clear()
    ledger._SEEDED.clear()
    folder = tmp_path / "stacks"
    shutil.copytree(STACKS, folder)
    yield folder
    ledger._held.cache_clear()
    ledger._SEEDED.clear()


def seeded_and_built(path: Path, org: Path, usage: Usage | None = None) -> tuple[ledger.Held, ledger.Held]:
    built = built_stack(check_stack(path, org), usage or Usage())
    assert built.graph is not None, built.report.findings
    key = ledger._content_key(path, org)
    assert key is not None
    return ledger._SEEDED[key], ledger._built(path, org)


@pytest.mark.parametrize("stack", AWS_EXAMPLES)
def test_the_seeded_total_is_the_built_total(fresh: Path, stack: str) -> None:
    seeded, built = seeded_and_built(fresh / f"Pulumi.{stack}.yaml", fresh / "org.yaml")
    assert seeded == built
    assert seeded.problem is None and seeded.monthly_max  # a real total: priced, in a known account


def test_a_usage_file_does_not_reach_the_ledger(fresh: Path) -> None:
    """The run's usage file prices the stack's own report; every reader of the ledger counts the same total, the
    one priced with the plan's assumed usage alone (as `_built` prices it)."""
    hours = ResourceUsage(monthly_hours=Decimal(1), instances=1)
    usage = Usage(UsageFile(resource_type_default_usage={"aws:autoscaling/group:Group": hours}))
    path = fresh / "Pulumi.chat-serve.yaml"
    own = built_stack(check_stack(path, fresh / "org.yaml"), usage).report.cost
    ledger._SEEDED.clear()
    seeded, built = seeded_and_built(path, fresh / "org.yaml", usage)
    assert seeded == built
    assert own is not None and own.monthly_max_usd < sum(seeded.monthly_max.values()), "the usage file did price"
