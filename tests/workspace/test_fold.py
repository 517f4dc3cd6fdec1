"""The workspace's fold of a folder's other stacks: quota holdings from their plans, totals from their builds,
the registry's graph; each kept across processes by content, read back equal, rebuilt when an input changes, and
the same figure whether the run built the stack itself or the workspace built it from its file."""

from __future__ import annotations

import copy
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.commands.preview import built_stack
from gpuinfra.cost import Usage
from gpuinfra.cost.usage import ResourceUsage, UsageFile
from gpuinfra.load import resolve
from gpuinfra.spec import YamlDocument, parse_stack, read_yaml
from gpuinfra.spec.documents import read_org
from gpuinfra.store import disk
from gpuinfra.validators.checked import check
from gpuinfra.workspace import _workspace, builds, workspace_of
from gpuinfra.workspace.check import check_stack
from gpuinfra.workspace.members import read_member
from gpuinfra.workspace.quotas import planned
from helpers import STACKS

P5_VCPUS = 192  # p5.48xlarge (AWS EC2 accelerated computing instance types page)
AWS_EXAMPLES = ["chat-serve", "chat-serve-k8s", "llm-finetune", "llm-train", "llm-train-eks", "model-registry"]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    _workspace.cache_clear()
    folder = tmp_path / "stacks"
    shutil.copytree(STACKS, folder)
    yield folder
    _workspace.cache_clear()


def test_a_planned_sibling_is_stored_read_back_and_missed_when_changed(fresh: Path) -> None:
    org = fresh / "org.yaml"
    path = fresh / "Pulumi.llm-train-eks.yaml"
    first = planned(read_member(path), org, org.read_bytes())
    assert ["us-east-1", "L-417A185B", 4 * P5_VCPUS] in first["needs"]  # on_demand_base 4 of 16 (hand count)
    assert planned(read_member(path), org, org.read_bytes()) == first  # from the disk: exactly
    path.write_text(path.read_text() + "\nbroken: [\n")
    after = planned(read_member(path), org, org.read_bytes())
    assert after["problem"] is not None and "cannot be read" in after["problem"]


def test_holdings_of_the_other_stacks_reach_the_plan(fresh: Path) -> None:
    """llm-train's quota need on its account counts llm-train-eks's on-demand p5 base, and nothing of its own."""
    checked = check_stack(fresh / "Pulumi.llm-train.yaml")
    held = {h for n in checked.plan.quotas for h in n.held}  # type: ignore[union-attr]
    assert ("llm-train-eks", 4 * P5_VCPUS) in held
    assert not any(stack == "llm-train" for stack, _ in held)


def test_a_total_is_read_back_equal_and_rebuilt_when_anything_changes(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = fresh / "org.yaml"
    path = fresh / "Pulumi.chat-serve.yaml"
    workspace = workspace_of(path, org)
    member = read_member(path)
    quotas = workspace.quotas("chat-serve")
    built = builds.built_total(member, org, org.read_bytes(), quotas)
    assert built.problem is None and built.monthly_max  # a real total, not an empty one

    calls: list[str] = []
    real = builds._build_total
    monkeypatch.setattr(builds, "_build_total", lambda m, o, q: calls.append(m.stack) or real(m, o, q))
    assert builds.built_total(member, org, org.read_bytes(), quotas) == built  # Decimals come back exactly
    assert calls == []

    entry = disk._path(builds._total_key(member, org.read_bytes(), quotas))
    entry.write_bytes(entry.read_bytes()[:-1] + b"\x00")  # tampered: ignored, built again
    assert builds.built_total(member, org, org.read_bytes(), quotas) == built
    assert calls == ["chat-serve"]

    path.write_text(path.read_text() + "\n# a comment changes the content\n")
    builds.built_total(read_member(path), org, org.read_bytes(), quotas)
    org.write_text(org.read_text() + "\n# so does this\n")
    builds.built_total(read_member(path), org, org.read_bytes(), quotas)
    assert calls == ["chat-serve"] * 3


@pytest.mark.parametrize("stack", AWS_EXAMPLES)
def test_the_recorded_total_is_the_built_total(fresh: Path, stack: str) -> None:
    path, org = fresh / f"Pulumi.{stack}.yaml", fresh / "org.yaml"
    made = built_stack(check_stack(path, org), Usage())
    assert made.graph is not None, made.report.findings
    workspace = workspace_of(path, org)
    recorded = workspace._built[stack]
    rebuilt = builds._build_total(read_member(path), org, workspace.quotas(stack))
    assert recorded == rebuilt
    assert recorded.problem is None and recorded.monthly_max  # a real total: priced, in a known account


def test_a_stack_edited_in_memory_is_not_recorded_as_its_file(fresh: Path) -> None:
    """A spec edited in memory under its file's name (the property tests preview thousands) is built and priced, but
    its total does not stand for the file's: not in the workspace, not on disk. The file's own build is recorded."""
    path, org = fresh / "Pulumi.llm-train.yaml", fresh / "org.yaml"
    data = copy.deepcopy(read_yaml(path).data)
    data["config"]["gpuinfra:training"]["compute"]["elastic"]["max_nodes"] = 1  # 2 in the file
    inputs = resolve(parse_stack(YamlDocument(path=path, data=data)), read_org(org), load_catalog())
    edited = built_stack(check(inputs, load_catalog()), Usage())
    workspace = workspace_of(path, org)
    key = builds._total_key(read_member(path), org.read_bytes(), workspace.quotas("llm-train"))
    file_total = builds._build_total(read_member(path), org, workspace.quotas("llm-train"))
    assert edited.graph is not None and edited.report.cost is not None
    assert builds.total_of("llm-train", edited.checked.plan, edited.graph) != file_total  # one elastic node less
    assert "llm-train" not in workspace._built and disk.read(key) is None

    built_stack(check_stack(path, org), Usage())
    assert workspace._built["llm-train"] == file_total and disk.read(key) is not None


def test_a_usage_file_does_not_reach_the_account_totals(fresh: Path) -> None:
    """The run's usage file prices the stack's own report; every other stack counts the total priced with the
    plan's assumed usage alone, as a build from the file prices it."""
    hours = ResourceUsage(monthly_hours=Decimal(1), instances=1)
    usage = Usage(UsageFile(resource_type_default_usage={"aws:autoscaling/group:Group": hours}))
    path, org = fresh / "Pulumi.chat-serve.yaml", fresh / "org.yaml"
    own = built_stack(check_stack(path, org), usage).report.cost
    recorded = workspace_of(path, org)._built["chat-serve"]
    assert own is not None and own.monthly_max_usd < sum(recorded.monthly_max.values()), "the usage file did price"


def test_the_registry_graph_reads_back_equal_and_is_rebuilt_on_a_change(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = fresh / "org.yaml"
    path = fresh / "Pulumi.model-registry.yaml"
    quotas = workspace_of(path, org).quotas("model-registry")
    calls: list[str] = []
    real = builds._build_registry
    monkeypatch.setattr(builds, "_build_registry", lambda m, o, q: calls.append(m.stack) or real(m, o, q))
    first = builds.registry_graph(read_member(path), org, org.read_bytes(), quotas)
    assert first is not None and any(r.type == "aws:kms/key:Key" for r in first.resources)
    assert builds.registry_graph(read_member(path), org, org.read_bytes(), quotas) == first
    assert calls == ["model-registry"]
    path.write_text(path.read_text() + "\n# changed\n")
    builds.registry_graph(read_member(path), org, org.read_bytes(), quotas)
    assert calls == ["model-registry"] * 2
