"""The ladder walks four intents, each built to stop on a different rung (issue 52): a low-traffic chat bot on a
managed API, a support bot that needs a tone on one GPU, a high-traffic 8B service on its own L4 fleet, and a new
70B model trained on a cluster and then served. Every expected figure is computed here by hand from the cited
prices (catalog rows named in each test) and the planners' documented formulas, never read from the advice."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.managed import load_managed_prices
from gpuinfra.plan.advise import Walked, advise
from gpuinfra.plan.advise.specs import dataprep_spec
from gpuinfra.spec.intent import IntentSpec, read_intent
from helpers import ROOT

INTENTS = ROOT / "stacks" / "intents"
HOURS_PER_MONTH = 730  # the month every hourly price is billed over (plan/checkpoint.py, cost/model.py)
DAYS_PER_MONTH = 730 / 24
# On-demand USD/h, catalog prices.json rows of source van-od (ec2instances.info, 2026-01-21):
G6_XLARGE = 0.8048  # 1 x L4, us-east-1 and us-west-2
G6E_XLARGE = 1.861  # 1 x L40S, us-east-1
P5_48XLARGE = 55.04  # 8 x H100, us-east-1
# USD per 1M tokens in/out, catalog managed_apis.yaml rows from litellm 1.110.2's price table:
BEDROCK_8B = (0.22, 0.22)
DEEPINFRA_8B = (0.03, 0.05)
BEDROCK_70B = (0.72, 0.72)


def walked(name: str, **changes: Any) -> Walked:
    intent = read_intent(INTENTS / f"{name}.yaml").spec
    if changes:
        data = intent.model_dump()
        for dotted, value in changes.items():
            *parents, last = dotted.split(".")
            target = data
            for part in parents:
                target = target[part]
            target[last] = value
        intent = IntentSpec.model_validate(data)
    return advise(intent, load_catalog(), load_managed_prices())


def api_monthly(requests_per_day: float, input_tokens: int, output_tokens: int, price: tuple[float, float]) -> float:
    return requests_per_day * (input_tokens * price[0] + output_tokens * price[1]) / 1e6 * DAYS_PER_MONTH


def test_the_prices_the_tests_cite_are_the_catalog_rows() -> None:
    """The literals above are the catalog's data (a change to the data shows here first)."""
    catalog = load_catalog()
    assert float(catalog.on_demand("g6.xlarge", "us-east-1").usd_per_hour) == G6_XLARGE  # type: ignore[union-attr]
    assert float(catalog.on_demand("g6e.xlarge", "us-east-1").usd_per_hour) == G6E_XLARGE  # type: ignore[union-attr]
    assert float(catalog.on_demand("p5.48xlarge", "us-east-1").usd_per_hour) == P5_48XLARGE  # type: ignore[union-attr]
    rows = {(p.provider, p.parameters_billion): p for p in load_managed_prices().prices}
    for key, price in {
        ("amazon-bedrock", 8): BEDROCK_8B,
        ("deepinfra", 8): DEEPINFRA_8B,
        ("amazon-bedrock", 70): BEDROCK_70B,
    }.items():
        row = rows[key]
        assert (float(row.input_usd_per_mtok), float(row.output_usd_per_mtok)) == price
        assert row.source == "litellm-1.110.2"


def test_a_low_traffic_chat_bot_stops_on_the_managed_api() -> None:
    advice = walked("chat-bot").advice
    assert advice.stopped_at == 1
    assert advice.rungs[0].answer is True
    options = {o.provider: o for o in advice.managed.options}  # type: ignore[union-attr]
    # 2,000 requests a day of 800 tokens in and 200 out
    assert float(options["amazon-bedrock"].monthly_usd) == pytest.approx(
        api_monthly(2000, 800, 200, BEDROCK_8B), abs=0.005
    )
    assert float(options["deepinfra"].monthly_usd) == pytest.approx(
        api_monthly(2000, 800, 200, DEEPINFRA_8B), abs=0.005
    )
    assert advice.managed.cheapest.provider == "deepinfra"  # type: ignore[union-attr]
    # the fleet it beats: the floor of two L4 replicas all month
    assert float(advice.serving.monthly_usd) == pytest.approx(2 * G6_XLARGE * HOURS_PER_MONTH, abs=0.005)  # type: ignore[union-attr]
    # the answer's bill is the API alone: no one-off, the cheapest eligible API each month
    assert advice.bill.one_off_usd == 0
    assert float(advice.bill.total_usd) == pytest.approx(
        24 * round(api_monthly(2000, 800, 200, DEEPINFRA_8B), 2), abs=0.01
    )
    assert walked("chat-bot").specs == {}  # nothing to build


def test_a_support_bot_that_needs_a_tone_stops_on_one_gpu() -> None:
    result = walked("support-bot")
    advice = result.advice
    assert advice.stopped_at == 2
    adapt = advice.adapt
    assert adapt is not None and adapt.refusal is None and adapt.gpus == 1
    assert adapt.instance_type == "g6e.xlarge"
    # plan/adapters.py finetune_flops: 6N a token with gradient checkpointing (forward, activation backward,
    # recomputed forward); 20M tokens x 2 epochs; one L40S at its bf16 dense peak (362 TFLOPS, NVIDIA L40S
    # datasheet, catalog accelerators.yaml) x the MFU the rung states with its source: the default bf16 0.48
    # (plan/flops.py DEFAULT_MFU), or the step model's for this node where the planner has one
    assert adapt.mfu == 0.48 if adapt.mfu_source.startswith("default") else "step model" in adapt.mfu_source
    hours = 6 * 8e9 * (20e6 * 2) / (362e12 * adapt.mfu) / 3600
    assert adapt.hours_per_run == pytest.approx(hours, rel=1e-9)
    assert float(adapt.cost_per_run_usd) == pytest.approx(hours * G6E_XLARGE, abs=0.006)  # type: ignore[arg-type]
    assert adapt.cost_usd == adapt.cost_per_run_usd * 4  # type: ignore[operator]
    # serving the adapted model is the team's own: the managed API is not the answer, whatever it costs
    assert advice.rungs[0].answer is False and "adapted" in advice.rungs[0].why
    # LoRA rank 16 on all seven projections of Llama 3.1 8B (hidden 4096, KV 8 x 128 = 1024, MLP 14336), 32
    # layers: r x (in + out) each (Hu et al. 2021), served beside the base in the fleet's spec
    per_layer = 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 14336))
    assert adapt.adapter_parameters == 32 * per_layer == 41_943_040
    served = result.specs["serve"].model.adapters  # type: ignore[union-attr]
    assert [(a.rank, a.parameters_million) for a in served] == [(16, 41.94304)]
    assert set(result.specs) == {"finetune", "serve"}
    assert result.specs["finetune"].account != result.specs["serve"].account  # rung 5


def test_a_high_traffic_8b_service_stops_on_its_own_fleet() -> None:
    """The intent's measured throughput (1.5 requests/s a replica, as stacks/Pulumi.chat-serve.yaml measured it)
    makes the fleet's size a hand computation: 3,000M tokens a day of 1,250-token requests over two regions."""
    advice = walked("chat-service").advice
    assert advice.serving is not None and advice.serving.throughput_rps_per_replica == 1.5
    assert advice.stopped_at == 3
    serving = advice.serving
    assert serving is not None and serving.instance_type == "g6.xlarge" and serving.accelerator == "L4"
    requests_per_day = 3000e6 / 1250
    per_region = math.ceil(requests_per_day / 86400 / 2 / 1.5)  # 13.9 rps a region -> 10 replicas
    assert serving.replicas_mean == 2 * per_region == 20
    assert float(serving.monthly_usd) == pytest.approx(per_region * 2 * G6_XLARGE * HOURS_PER_MONTH, abs=0.005)  # type: ignore[arg-type]
    bedrock = api_monthly(requests_per_day, 1000, 250, BEDROCK_8B)  # $20,075 a month
    assert float(advice.managed.cheapest.monthly_usd) == pytest.approx(bedrock, abs=0.005)  # type: ignore[union-attr]
    # only Bedrock qualifies (constraints.managed_providers): the cheaper hosted APIs are listed, not chosen
    assert {o.provider for o in advice.managed.options if not o.eligible} == {"deepinfra", "fireworks-ai", "databricks"}  # type: ignore[union-attr]
    # break-even: the floor (2 replicas a region) over Bedrock's price a token and the days of a month
    floor = 2 * (2 * G6_XLARGE * HOURS_PER_MONTH)
    assert serving.break_even_tokens_per_day == pytest.approx(floor / (0.22e-6 * DAYS_PER_MONTH), rel=1e-9)
    assert any("above 351M tokens/day" in m and "cheaper than amazon-bedrock" in m for m in advice.movers)
    assert advice.bill.recurring_share == 1.0  # serving is the whole lifetime bill here


def test_the_same_service_at_a_hundredth_of_the_traffic_moves_to_the_api() -> None:
    """The mover holds: below the break-even the ladder stops on rung 1 instead."""
    advice = walked("chat-service", **{"traffic.tokens_per_day_million": 30.0}).advice
    assert advice.stopped_at == 1
    assert advice.managed.cheapest.provider == "amazon-bedrock"  # type: ignore[union-attr]


def test_a_new_70b_model_stops_on_distributed_training() -> None:
    result = walked("new-70b")
    advice = result.advice
    assert advice.stopped_at == 4
    train = advice.train
    assert train is not None and train.instance_type == "p5.48xlarge" and train.interconnect == "efa"
    assert train.meets_deadline is True and train.days is not None and train.days <= 60
    # the physical floor: 6 N D FLOPs (Kaplan et al. 2020) at the H100's bf16 dense peak (989 TFLOPS, NVIDIA H100
    # datasheet) on every GPU, no loss at all: the plan can only be slower
    floor_days = 6 * 70e9 * 1000e9 / (train.gpus * 989e12) / 86400
    assert train.days > floor_days
    assert train.gpus == 8 * train.nodes
    # on demand: nodes x the hourly rate x the wall-clock hours (plan/runtime.py run_point)
    assert float(train.cost_usd) == pytest.approx(train.nodes * P5_48XLARGE * train.days * 24, rel=1e-4)  # type: ignore[arg-type]
    assert train.gpu_hours == pytest.approx(train.gpus * train.days * 24, rel=1e-9)
    assert train.lustre_capacity_gib and train.checkpoint_gb == pytest.approx(70e9 * 16 / 1e9)  # bf16 + Adam: 16 B
    # the run: 6 N D at the stated MFU of the dense peak on every GPU, over the stated goodput (plan/runtime.py)
    assert train.days == pytest.approx(6 * 70e9 * 1000e9 / (train.gpus * 989e12 * train.mfu * train.goodput) / 86400)
    # the corpus: 40 TB of WARC is 40 x 1,500 = 60,000 files (one Common Crawl snapshot: 60 TB in 90,000 files),
    # in its own dataprep account, planned by plan_dataprep within the month it is given
    prep_spec = dataprep_spec(read_intent(INTENTS / "new-70b.yaml").spec)
    assert prep_spec.corpus.files == 60_000 and prep_spec.corpus.size_tb == 40
    assert prep_spec.account == "ml-dataprep" and prep_spec.output.readers == ["ml-training"]
    prep = advice.dataprep
    assert prep is not None and prep.planned and prep.hours is not None and 0 < prep.hours <= 720
    assert prep.cost_usd is not None and prep.cost_usd > 0
    # the bill: the data preparation and the run once, serving each month
    bill = advice.bill
    assert bill.complete and bill.unknown == []
    assert bill.one_off_usd == train.cost_usd + prep.cost_usd
    assert bill.total_usd == bill.one_off_usd + 36 * bill.recurring_monthly_usd
    # rung 5: the training cluster and the fleet in different accounts
    assert result.specs["train"].account == advice.accounts.training == "ml-training"
    assert result.specs["serve"].account == advice.accounts.serving == "ml-inference"
    assert result.specs["prep"].account == advice.accounts.dataprep == "ml-dataprep"
    assert set(result.specs) == {"prep", "train", "serve"}  # what `advise --init` writes


H100_BYTES = 81920 * 2**20  # catalog accelerators.yaml, the H100 row (nvidia-gfd)


def per_gpu_bytes(nodes: int, zero: int, sequence: int = 8192, recompute: str = "selective") -> float:
    """The 70B's bytes a GPU at TP 8, PP 1 on `nodes` x 8 H100, as plan/layout.py documents them: bf16 weights (2 B
    a parameter), fp32 gradients (4 B, Megatron-LM's main_grad) and Adam's fp32 states (12 B) over the 8-way
    tensor-parallel group, ZeRO sharding the optimizer (stage 1+), the gradients (2+) and the weights (3) over the
    data-parallel ranks (Rajbhandari et al. 2020); activations of 80 layers at 34 sbh / t bytes each (Korthikanti
    et al. 2022, table 2: selective recompute with sequence parallelism; s 8,192, b 1, h 8,192), or only each
    layer's input, 2 sbh / t, under full recompute; ZeRO-3 unshards two layers' weights at once; a 10% reserve."""
    shard, d = 70e9 / 8, nodes
    weights = shard * 2 / (d if zero >= 3 else 1)
    gradients = shard * 4 / (d if zero >= 2 else 1)
    optimizer = shard * 12 / d
    activations = 80 * sequence * 8192 * (34 if recompute == "selective" else 2) / 8
    buffers = 2 * 70e9 / 80 / 8 * 2 if zero >= 3 else 0
    return weights + gradients + optimizer + activations + buffers + 0.10 * H100_BYTES


def test_the_70b_is_laid_out_at_zero_2_as_the_planner_would() -> None:
    """ZeRO-2 fits at the planned count, so the cluster is not laid out at ZeRO-3 (which re-gathers the weights for
    every micro-batch: llm-train at 16 nodes takes 83.7 days at ZeRO-2, 190 at ZeRO-3, docs/planning.md)."""
    result = walked("new-70b")
    train = result.advice.train
    assert train is not None and train.layout == "TP=8 PP=1 ZeRO-2 recompute selective +SP"
    assert result.specs["train"].model.parallelism.zero_stage == 2  # type: ignore[union-attr]
    assert train.layout_gb == pytest.approx(per_gpu_bytes(train.nodes, 2) / 1e9, abs=0.001)
    assert per_gpu_bytes(train.nodes, 2) == pytest.approx(55.0e9, abs=0.05e9)
    assert per_gpu_bytes(train.nodes, 2) < H100_BYTES
    assert train.gpu_gb == pytest.approx(H100_BYTES / 1e9)
    # 23 nodes, as llm-train's fewest meeting 60 days at the same layout and batch (docs/planning.md): 22 would
    # need a goodput above what 22 nodes can have (Young/Daly's waste grows as the square root of the failure
    # rate, so at 22 nodes it is at least sqrt(22/23) of the waste at 23)
    assert train.nodes == 23 and train.goodput is not None
    goodput_22 = 1 - (1 - train.goodput) * math.sqrt(22 / 23)
    assert 6 * 70e9 * 1000e9 / (22 * 8 * 989e12 * train.mfu * goodput_22) / 86400 > 60


def test_zero_3_only_where_zero_2_does_not_fit() -> None:
    """At 3 nodes the 70B's ZeRO-2 layout needs 95.6 GB a GPU (the gradients and Adam's states shard only 3 ways),
    past the H100's 85.9; ZeRO-3 shards the weights too and fits: the cluster falls back to it, and says why."""
    assert per_gpu_bytes(3, 2) == pytest.approx(95.6e9, abs=0.05e9)
    assert per_gpu_bytes(3, 2) > H100_BYTES
    assert per_gpu_bytes(3, 3) == pytest.approx(84.3e9, abs=0.05e9)
    assert per_gpu_bytes(3, 3) < H100_BYTES
    result = walked("new-70b", **{"train.nodes": 3, "train.deadline_days": None})
    train = result.advice.train
    assert train is not None and train.nodes == 3 and train.layout is not None and "ZeRO-3" in train.layout
    assert result.specs["train"].model.parallelism.zero_stage == 3  # type: ignore[union-attr]
    assert train.layout_gb == pytest.approx(per_gpu_bytes(3, 3) / 1e9, abs=0.001)
    assert "ZeRO-2 recompute selective +SP does not fit at 3 nodes (95.6 GB a GPU of 85.9)" in train.layout_why


def test_where_no_first_layout_fits_the_planners_proposal_is_taken() -> None:
    """At 32K-token sequences the 70B's selective-recompute activations alone are 91.3 GB a GPU: neither ZeRO-2 nor
    ZeRO-3 fits at TP 8, and the cluster takes what the planner proposes from the ZeRO-2 layout (plan/layout.py
    propose_layout: no pipeline first, then full recompute, which keeps one layer input, at ZeRO-2)."""
    assert per_gpu_bytes(8, 2, 32768) == pytest.approx(134.9e9, abs=0.05e9)
    assert per_gpu_bytes(8, 3, 32768) > H100_BYTES
    result = walked("new-70b", **{"train.sequence_length": 32768})
    train = result.advice.train
    assert train is not None and train.layout == "TP=8 PP=1 ZeRO-2 recompute full +SP"
    assert train.layout_gb == pytest.approx(per_gpu_bytes(train.nodes, 2, 32768, "full") / 1e9, abs=0.001)
    assert "the planner proposes TP=8 PP=1 ZeRO-2 recompute full +SP" in train.layout_why
    assert "(134.9 GB a GPU of 85.9)" in train.layout_why
    assert train.meets_deadline is True


def test_a_cluster_no_layout_fits_is_said_on_the_rung() -> None:
    """A million-token sequence: not even full recompute's layer inputs fit (80 x 2 x 2^20 x 8,192 / 8 = 171.8 GB
    a GPU), the planner has no proposal, and the rung says so rather than presenting the run as an answer."""
    assert H100_BYTES < 80 * 2 * 2**20 * 8192 / 8
    advice = walked("new-70b", **{"train.sequence_length": 2**20}).advice
    assert advice.stopped_at == 4 and "no layout tried fits GPU memory" in advice.rungs[3].why


def test_owning_the_training_nodes_against_renting_them() -> None:
    """plan/ownership.py's documented arithmetic, by hand, with the intent's quote and the p5's 10.2 kW
    (catalog power.yaml, DGX H100 guide)."""
    train = walked("new-70b").advice.train
    assert train is not None and train.ownership is not None
    n, own = train.nodes, train.ownership
    nameplate = n * 10.2
    monthly = (
        400000 * n / (5 * 12)  # capital, straight-line over five years
        + nameplate * 1.0 * 1.15 * HOURS_PER_MONTH * 0.08  # power at facility kW
        + nameplate * 150  # colocation per contracted kW
        + 25000 * n / 12  # support
    )
    assert float(own.own_usd) == pytest.approx(monthly * 24, abs=0.02 * 24)
    assert float(own.rent_usd) == pytest.approx(P5_48XLARGE * n * HOURS_PER_MONTH * 24, abs=0.01)  # type: ignore[arg-type]
    running = monthly - 400000 * n / 60
    assert own.break_even_month == math.ceil(400000 * n / (P5_48XLARGE * n * HOURS_PER_MONTH - running))


def test_a_full_fine_tune_is_training_not_one_gpu() -> None:
    advice = walked("support-bot", **{"adapt.method": "full"}).advice
    assert advice.adapt is not None and advice.adapt.refusal
    assert advice.rungs[1].answer is False and advice.stopped_at == 4
    assert advice.train is not None


def test_no_eligible_api_is_unknown_not_free() -> None:
    advice = walked("chat-bot", **{"constraints.data_residency": ["eu-west-1"]}).advice
    assert advice.managed.cheapest is None  # type: ignore[union-attr]
    assert advice.stopped_at == 3 and "no comparable hosted model qualifies" in advice.rungs[0].why


def test_a_data_residency_the_source_cannot_confirm_rules_the_provider_out() -> None:
    advice = walked("chat-bot", **{"constraints.data_residency": ["us-east-1"]}).advice
    eligible = {o.provider for o in advice.managed.options if o.eligible}  # type: ignore[union-attr]
    assert eligible == {"amazon-bedrock"}  # the only row whose source says where it serves from


def test_every_example_intent_is_walked() -> None:
    stops = {p.stem: walked(p.stem).advice.stopped_at for p in sorted(INTENTS.glob("*.yaml"))}
    assert stops == {"chat-bot": 1, "support-bot": 2, "chat-service": 3, "new-70b": 4}
    assert Decimal(0) == walked("chat-bot").advice.bill.one_off_usd


def test_serving_of_its_own_rules_the_api_out_whatever_it_costs() -> None:
    advice = walked("chat-bot", **{"constraints.custom_serving": True}).advice
    assert advice.stopped_at == 3 and "custom_serving" in advice.rungs[0].why


def test_no_hosted_api_at_all_marks_every_provider_with_the_reason() -> None:
    advice = walked("chat-bot", **{"constraints.managed_api": False}).advice
    assert advice.stopped_at == 3
    assert all(not o.eligible and "managed_api is false" in (o.why_not or "") for o in advice.managed.options)  # type: ignore[union-attr]


def test_a_monthly_budget_below_the_bill_moves_the_answer() -> None:
    advice = walked("chat-service", **{"constraints.monthly_budget_usd": 5000}).advice
    assert any("over constraints.monthly_budget_usd ($5,000.00)" in m for m in advice.movers)


def test_a_fleet_no_type_holds_is_unknown_not_free() -> None:
    """70B at bf16 (141 GB) on one L4 type: nothing the catalog prices holds it, so the fleet's cost is unknown
    and the API is compared with nothing (rung 1 still answers: it is priced)."""
    advice = walked("new-70b", **{"model.precision": "bf16", "traffic.gpu": "T4", "train": None}).advice
    serving = advice.serving
    assert serving is not None and serving.instance_type is None and serving.monthly_usd is None and serving.note
    assert advice.stopped_at == 1


def test_the_fleets_cold_start_is_the_stages_by_hand() -> None:
    """plan/coldstart.py's stages with catalog serving.yaml's figures: boot 40 s, a 12.64 GB image at 24 s/GB
    (extraction bound), 8 GB of fp8 weights over g6.xlarge's 2.5 Gbit/s baseline (capped by the gp3 volume's
    500 MiB/s), read back from the volume, and vLLM's cold engine start, 86.6 s."""
    serving = walked("chat-service").advice.serving
    assert serving is not None
    volume = 500 * 2**20 / 1e9
    rate = min(2.5 / 8, volume)
    expected = 40 + 12.64 * max(24, 1 / rate) + 8 / rate + 8 / volume + 86.6
    assert serving.cold_start_seconds == pytest.approx(expected, rel=1e-9)
    assert serving.warm_resume_seconds == pytest.approx(40 + 8 / volume + 86.6, rel=1e-9)


def test_a_latency_target_no_batch_meets_is_said() -> None:
    advice = walked("chat-bot", **{"traffic.latency_target_seconds": 0.5}).advice
    serving = advice.serving
    assert serving is not None and serving.max_sequences == 1
    assert serving.note and "out of reach" in serving.note
