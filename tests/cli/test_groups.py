"""An account's stacks preview together (commands/groups.py): each is built in the engine once per run, not once
more for every other stack of its account whose budget ledger reads it; groups start heaviest first; the report
keeps the order given."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from gpuinfra.commands.groups import account_groups
from gpuinfra.commands.preview import PreviewOptions, preview_run
from gpuinfra.pulumi import preview as engine_preview
from gpuinfra.workspace import _workspace
from helpers import STACKS


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The inference account's two examples and a third copy of chat-serve beside them; every cache empty."""
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    _workspace.cache_clear()
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    org_text = (STACKS / "org.yaml").read_text()
    for name in ("Pulumi.chat-serve.yaml", "Pulumi.chat-serve-k8s.yaml", "Pulumi.model-registry.yaml"):
        shutil.copy(STACKS / name, stacks / name)
    org, grants = re.subn(r"\{L-DB2E81BA: \d+, L-3819A6DF: \d+\}", "{L-DB2E81BA: 1000, L-3819A6DF: 1000}", org_text)
    assert grants == 4  # room in every inference region for a third stack: quotas never block the preview
    (stacks / "org.yaml").write_text(org)
    text = (STACKS / "Pulumi.chat-serve.yaml").read_text()
    (stacks / "Pulumi.chat-two.yaml").write_text(text.replace("name: chat-serve\n", "name: chat-two\n", 1))
    assert "name: chat-two" in (stacks / "Pulumi.chat-two.yaml").read_text()
    yield stacks
    _workspace.cache_clear()


def test_each_stack_of_an_account_is_built_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = engine_preview.preview_graph

    def counted(inputs, plan):  # type: ignore[no-untyped-def]
        built.append(inputs.stack.name)
        return real(inputs, plan)

    monkeypatch.setattr(engine_preview, "preview_graph", counted)
    stacks = [str(folder / f"Pulumi.{n}.yaml") for n in ("chat-serve", "chat-serve-k8s", "chat-two")]
    run = preview_run(stacks, PreviewOptions(org=folder / "org.yaml"))
    assert [s.stack for s in run.report.stacks] == ["chat-serve", "chat-serve-k8s", "chat-two"]
    assert all(s.policy is not None for s in run.report.stacks), "every stack policed, budget ledger included"
    # Before: chat-serve's ledger built chat-serve-k8s and chat-two, chat-serve-k8s's built chat-serve again (5).
    # The registry is built once too, for the flows of every fleet (the workspace's fold; it is not previewed).
    assert sorted(built) == ["chat-serve", "chat-serve-k8s", "chat-two", "model-registry"]


def test_grouped_and_alone_give_the_same_report(folder: Path) -> None:
    """The same stacks previewed together (their ledgers read the run's own totals) and each in a run of its own
    (its ledger builds the others from their files): the same stack reports, budgets included."""
    stacks = [str(folder / f"Pulumi.{n}.yaml") for n in ("chat-serve", "chat-serve-k8s", "chat-two")]
    together = preview_run(stacks, PreviewOptions(org=folder / "org.yaml")).report
    for i, path in enumerate(stacks):
        _workspace.cache_clear()  # a fresh process: the others' totals built from their files (or the disk)
        alone = preview_run([path], PreviewOptions(org=folder / "org.yaml")).report
        assert alone.stacks[0].model_dump_json() == together.stacks[i].model_dump_json()
    budget = [v for s in together.stacks for v in s.policy.violations if "budget" in v.policy]  # type: ignore[union-attr]
    assert budget, "two chat-serves exceed ml-inference's $60,000 only counted together (the ledger's figure)"


def test_groups_by_folder_and_account_heaviest_first(folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / "Pulumi.chat-two.yaml", other / "Pulumi.chat-two.yaml")
    broken = folder / "Pulumi.broken.yaml"
    broken.write_text("config: [\n")
    stacks = [
        str(folder / "Pulumi.model-registry.yaml"),  # 0: ml-registry
        str(folder / "Pulumi.chat-serve.yaml"),  # 1: ml-inference
        str(broken),  # 2: account unknown: alone
        str(other / "Pulumi.chat-two.yaml"),  # 3: ml-inference, another folder: another repository's ledger
        str(folder / "Pulumi.chat-two.yaml"),  # 4: ml-inference
        str(folder / "Pulumi.nowhere.yaml"),  # 5: no file: alone
    ]
    size = {i: Path(s).stat().st_size if Path(s).exists() else 0 for i, s in enumerate(stacks)}
    groups = account_groups(stacks, jobs=1)
    assert sorted(map(sorted, groups)) == [[0], [1, 4], [2], [3], [5]]
    assert [1, 4] in groups, "in the order given within a group"
    weights = [sum(size[i] for i in g) for g in groups]
    assert weights == sorted(weights, reverse=True)
    # Two cores, six stacks: no group above its share of three; an account of four splits in two.
    many = [str(folder / "Pulumi.chat-serve.yaml")] * 4 + [str(folder / "Pulumi.model-registry.yaml")] * 2
    assert sorted(map(sorted, account_groups(many, jobs=2))) == [[0, 1, 2], [3], [4, 5]]
