"""The dataprep planner against hand computations from the cited figures: FineWeb's per-dump Slurm allowances
(huggingface/datatrove examples/fineweb.py), datatrove's signature record, the tokenizer's measured rate, the
catalog's prices, and the node-count choice checked by walking every count by hand."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import DataprepPlan, build_plan
from gpuinfra.spec import DataprepSpec, read_org

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "stacks" / "Pulumi.corpus-prep.yaml"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE.read_text())["config"]["gpuinfra:dataprep"]


def plan_of(raw: dict[str, Any], **over: Any) -> tuple[DataprepSpec, DataprepPlan]:
    data = copy.deepcopy(raw)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    spec = DataprepSpec.model_validate(data)
    plan = build_plan(spec, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())
    assert isinstance(plan, DataprepPlan)
    return spec, plan


def test_one_dump_reproduces_finewebs_allowances(raw: dict[str, Any]) -> None:
    """60 TB of WARC is one dump: the base processing is FineWeb's 8000 tasks x 10 h = 80,000 core-hours, the
    cluster step its 8 CPUs x 25 GB = 200 GB, the buckets 700 tasks x 3 CPUs x 2 h = 4,200 core-hours and the
    filter 1000 tasks x 5 h = 5,000 core-hours."""
    _, plan = plan_of(raw)
    stages = {s.stage: s for s in plan.stages}
    assert stages["filter"].core_hours == pytest.approx(80_000)
    assert stages["minhash-buckets"].core_hours == pytest.approx(4_200)
    assert stages["minhash-filter"].core_hours == pytest.approx(5_000)
    assert plan.cluster.memory_gb == pytest.approx(200)
    # text after the filters: 60 TB x (0.52 / 2.8 kept in all) / 0.504 kept by dedup = 22.109 TB
    assert stages["minhash-signatures"].input_tb == pytest.approx(60 * 0.52 / 2.8 / 0.504, rel=1e-9)
    assert stages["minhash-signatures"].core_hours == pytest.approx(22.1088 * 2000, rel=1e-4)
    # the cluster step: 7 h per TB of text (datatrove#106), serial
    assert stages["minhash-cluster"].serial and stages["minhash-cluster"].hours == pytest.approx(22.1088 * 7, rel=1e-4)


def test_signature_bytes_match_datatroves_record(raw: dict[str, Any]) -> None:
    """datatrove writes per bucket struct '<8QI' (8 x 8 + 4 = 68 bytes, issue #301's 'multiple of 68 bytes'), 14
    buckets: 952 bytes a document; 32-bit hashes '<8II': 14 x 36 = 504."""
    _, plan = plan_of(raw)
    assert plan.scratch.signature_bytes_per_document == 952
    _, half = plan_of(raw, stages={**raw["stages"], "dedup": {"precision": 32}})
    assert half.scratch.signature_bytes_per_document == 14 * (8 * 4 + 4) == 504
    # 2.64e9 pages x 0.3685 kept x 952 B
    assert plan.scratch.signatures_gb == pytest.approx(2.64e9 * (0.52 / 2.8 / 0.504) * 952 / 1e9, rel=1e-9)


def test_tokenize_rate_by_hand(raw: dict[str, Any]) -> None:
    """4.21 MB/s a thread: a TB takes 1e12 / 4.21e6 / 3600 = 65.98 core-hours; tokens are bytes / 4."""
    _, plan = plan_of(raw)
    tok = plan.stages[-1]
    assert tok.stage == "tokenize"
    assert tok.core_hours / tok.input_tb == pytest.approx(65.98, abs=0.01)
    assert plan.tokens == pytest.approx(tok.input_tb * 1e12 / 4, rel=1e-9)


def test_workers_are_the_cheapest_count_that_meets_the_deadline(raw: dict[str, Any]) -> None:
    """Walk every count by hand: a parallel stage runs min(vCPUs, tasks) at a time, the cluster step alone; the
    chosen count meets the deadline and no count that meets it costs less."""
    spec, plan = plan_of(raw)
    spot = Decimal("0.4032") * (1 - Decimal("0.68645"))  # m7i.2xlarge us-east-1 (kp-price) less the spot default
    assert plan.usd_per_node_hour == spot

    def hours(n: int) -> float:
        total = 0.0
        for s in plan.stages:
            total += s.core_hours if s.serial else s.core_hours / min(n * 8, s.tasks) * (1 + plan.retry_overhead)
        return total

    assert plan.hours == pytest.approx(hours(plan.nodes))
    assert plan.hours <= 720 < hours(plan.nodes - 1)
    assert spec.deadline_hours == 720


def test_a_budget_buys_the_fastest_run_within_it(raw: dict[str, Any]) -> None:
    data = {k: v for k, v in raw.items() if k != "deadline_hours"}
    data["workers"] = {**raw["workers"], "cluster_instance_type": "m7i.2xlarge"}  # a priced node, to compare costs
    _, fast = plan_of(data, budget_usd=1_000_000)
    assert fast.nodes == 64 and fast.within_budget  # the most nodes: cost rises with nodes only through idle time
    _, tight = plan_of(data, budget_usd=100)
    assert tight.within_budget is False


def test_the_cluster_step_runs_on_the_cheapest_cpu_type_that_holds_it(raw: dict[str, Any]) -> None:
    """200 GB = 186 GiB: of the catalog's CPU types only r7i.8xlarge (256 GiB, kp-types) holds it, at $2.1168 an
    hour (kp-price, us-east-1); the compute is then the workers' spot hours plus its serial hours."""
    _, plan = plan_of(raw)
    assert plan.cluster.instance_type == "r7i.8xlarge" and plan.cluster.usd_per_hour == Decimal("2.1168")
    workers = plan.usd_per_node_hour * plan.nodes * Decimal(repr(plan.hours))  # type: ignore[operator]
    serial = Decimal("2.1168") * Decimal(repr(plan.serial_hours))
    assert plan.compute_usd == workers + serial


def test_no_cpu_type_holds_a_bigger_cluster_step_is_said(raw: dict[str, Any]) -> None:
    """Two dumps: 400 GB = 373 GiB, more than any catalog CPU type holds: no node, and the cost is unknown."""
    _, plan = plan_of(raw, corpus={**raw["corpus"], "size_tb": 120, "files": 180000, "documents": 5280000000})
    assert plan.cluster.instance_type is None and plan.cluster.why and "373 GiB" in plan.cluster.why
    assert "the largest holds 256 GiB" in plan.cluster.why
    assert plan.compute_usd is None and plan.cost_usd is None


def test_a_small_corpus_fits_a_catalog_node(raw: dict[str, Any]) -> None:
    """0.1 TB of WARC: 0.1 x 0.3685 TB of text x 9.05 GB per TB = 0.33 GB: the cheapest CPU type (m7i.xlarge)."""
    _, plan = plan_of(raw, corpus={**raw["corpus"], "size_tb": 0.1, "files": 150, "documents": 4_400_000})
    assert plan.cluster.instance_type == "m7i.xlarge"
    assert plan.cluster.memory_gb == pytest.approx(0.1 * 200 / 60)
    assert plan.cost_usd is not None and plan.compute_usd is not None


def test_gpu_stage_is_marked(raw: dict[str, Any]) -> None:
    _, cpu = plan_of(raw)
    assert not cpu.gpu
    _, gpu = plan_of(raw, stages={**raw["stages"], "dedup": {"accelerator": "gpu"}})
    assert gpu.gpu


def test_the_review_compares_the_runs_hours_and_cost(raw: dict[str, Any]) -> None:
    """The PR comment's plan figures: the run's hours and cost per run, as the plan computed them."""
    from gpuinfra.plan.figures import plan_figures

    _, plan = plan_of(raw)
    figures = plan_figures(plan)
    assert figures["dataprep run: hours"].value == Decimal(repr(plan.hours)).quantize(Decimal("0.1"))
    assert figures["dataprep run: cost per run"].value == plan.cost_usd.quantize(Decimal("1"))  # type: ignore[union-attr]
    _, slower = plan_of(raw, deadline_hours=2000)
    assert plan_figures(slower)["dataprep run: hours"].value > figures["dataprep run: hours"].value  # type: ignore[operator]


def test_without_dedup_there_is_no_cluster_node_to_buy(raw: dict[str, Any]) -> None:
    """No MinHash stage, no cluster step: no node is named for it, none is priced, and the on-demand quota counts
    only the login node (m7i.xlarge, 4 vCPUs). It used to name the cheapest CPU type "holding" 0 GB."""
    _, plan = plan_of(raw, stages={**raw["stages"], "dedup": None})
    assert plan.cluster.instance_type is None and plan.cluster.usd_per_hour is None
    assert [s.stage for s in plan.stages] == ["filter", "tokenize"]
    on_demand = [q for q in plan.quotas if q.code == "L-1216C47A"]
    assert [q.vcpus for q in on_demand] == [4]
