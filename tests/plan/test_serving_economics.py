"""Serving economics of the chat-serve example, computed by hand: tokens/s per replica, concurrency, cost per
million tokens per region, and what quantizing the weights changes on the same instance.

Figures: Llama-3.1-8B's KV cache shape (32 layers, 8 KV heads, head_dim 128: the model's config.json) at fp8 is
2 x 32 x 8 x 128 x 1 B = 65,536 B per token; NVIDIA L4 300 GB/s and 24 GB (22,888 MiB as the GPU reports it),
L40S 864 GB/s and 48 GB (45,776 MiB) from the datasheets (catalog serving.yaml); on-demand g6.xlarge us-east-1
$0.8048/h and g6e.xlarge ap-northeast-1 $2.699/h from ec2instances.info's 2026-01-21 snapshot (sources.yaml
`van-od`). The decode roofline: steps/s = bandwidth / (weights + batch x KV bytes of the mean context).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.figures import PER_MILLION_TOKENS, plan_figures
from gpuinfra.plan.tokens import cost_per_million_tokens
from helpers import checked

MIB = 2**20
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 1
CONTEXT = 1000 + 250 / 2  # input tokens + half the output, the mean a sequence holds while decoding
BATCH = 24  # max_concurrent_sequences; the KV cache left after the weights holds more (checked below)
PLANNED = 1.5 * 250  # throughput_rps_per_replica x output tokens


def roofline(bandwidth_gb_s: float, weights: float) -> float:
    return BATCH * bandwidth_gb_s * 1e9 / (weights + BATCH * KV_PER_TOKEN * CONTEXT)


def per_million(hourly: str, tokens_per_s: float) -> Decimal:
    return Decimal(hourly) / (Decimal(repr(tokens_per_s)) * 3600) * 1_000_000


@pytest.fixture(scope="module")
def plan() -> InferencePlan:
    p = checked("chat-serve").plan
    assert isinstance(p, InferencePlan) and p.economics is not None
    return p


def test_cost_per_million_tokens_is_hourly_over_tokens_an_hour() -> None:
    # $0.80/h at 100 tokens/s: 360,000 tokens an hour, so a million cost 0.80 / 0.36 = $2.2222...
    assert cost_per_million_tokens(100.0, Decimal("0.80")) == Decimal("0.80") / Decimal("0.36")
    assert cost_per_million_tokens(0.0, Decimal("0.80")) is None  # nothing produced: unbounded, not zero


def test_each_region_shows_tokens_per_second_concurrency_and_cost_per_million(plan: InferencePlan) -> None:
    assert plan.economics is not None
    rows = {r.region: r for r in plan.economics.regions}
    assert set(rows) == {"us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"}
    l4 = rows["us-east-1"]
    assert l4.instance_type == "g6.xlarge" and l4.tokens_per_s == PLANNED
    assert l4.bound_tokens_per_s == pytest.approx(roofline(300, 8e9))  # 737 tokens/s, 2.9 requests/s
    assert l4.bound_tokens_per_s == pytest.approx(737.0, abs=0.1)
    kv_room = int(22888 * MIB * 0.9) - 8e9
    assert kv_room // (KV_PER_TOKEN * CONTEXT) >= BATCH and l4.concurrency == BATCH
    assert l4.usd_per_hour == Decimal("0.8048")
    assert l4.usd_per_million_tokens == per_million("0.8048", PLANNED)  # $0.596
    assert float(l4.usd_per_million_tokens) == pytest.approx(0.5961, abs=1e-4)
    l40s = rows["ap-northeast-1"]
    assert l40s.instance_type == "g6e.xlarge"
    assert l40s.bound_tokens_per_s == pytest.approx(roofline(864, 8e9))  # 2,123 tokens/s
    assert float(l40s.usd_per_million_tokens or 0) == pytest.approx(2.699 / (375 * 3600) * 1e6)  # $1.999


def test_quantization_shows_the_change_in_fit_throughput_and_cost(plan: InferencePlan) -> None:
    econ = plan.economics
    assert econ is not None
    assert (econ.quantization_region, econ.quantization_instance) == ("us-east-1", "g6.xlarge")
    points = {p.precision: p for p in econ.quantization}
    usable = int(22888 * MIB * 0.9)
    kv_at_full_context = KV_PER_TOKEN * 8192 * 24
    # bf16 weights (16 GB) plus the fp8 cache at full context (12.9 GB) overflow one L4's 21.6 GB.
    assert 16e9 + kv_at_full_context > usable and not points["bf16"].fits
    assert points["bf16"].usd_per_million_tokens is None  # does not fit: no price, not zero
    # fp8 is the spec: the planned rate. int8 weights are one byte too: the same fit, rate and cost.
    assert points["fp8"].tokens_per_s == PLANNED
    assert points["int8"].fits and points["int8"].tokens_per_s == pytest.approx(PLANNED)
    # int4 halves the weights again: the step reads 4 GB + the KV cache, so the rate scales by the byte ratio.
    ratio = roofline(300, 4e9) / roofline(300, 8e9)
    assert ratio == pytest.approx((8e9 + BATCH * KV_PER_TOKEN * CONTEXT) / (4e9 + BATCH * KV_PER_TOKEN * CONTEXT))
    int4 = points["int4"]
    assert int4.fits and int4.tokens_per_s == pytest.approx(PLANNED * ratio)  # 635 tokens/s
    assert float(int4.usd_per_million_tokens or 0) == pytest.approx(0.8048 / (PLANNED * ratio * 3600) * 1e6)
    assert float(int4.usd_per_million_tokens or 0) < float(points["fp8"].usd_per_million_tokens or 0)


def test_a_bf16_spec_shows_what_int8_weights_save() -> None:
    """The same fleet at bf16 on L40S: int8 weights halve the bytes each decode step reads, so the same
    instance serves more tokens an hour and a million cost less by the same ratio."""
    plan = checked(
        "chat-serve",
        spec={
            "model.precision": "bf16",
            "model.kv_cache.precision": "bf16",
            "instance.gpu": "L40S",
            "regions[3].instance_type": None,
            "throughput_rps_per_replica": 1.0,
        },
    ).plan
    assert isinstance(plan, InferencePlan) and plan.economics is not None
    points = {p.precision: p for p in plan.economics.quantization}
    assert points["bf16"].fits and points["int8"].fits
    kv = 2 * 32 * 8 * 128 * 2  # bf16 cache: 131,072 B per token
    batch = points["bf16"].concurrency
    assert batch == 24
    step_bf16, step_int8 = 16e9 + 24 * kv * CONTEXT, 8e9 + 24 * kv * CONTEXT
    assert points["int8"].tokens_per_s == pytest.approx(250 * step_bf16 / step_int8)
    saving = float(points["bf16"].usd_per_million_tokens or 0) / float(points["int8"].usd_per_million_tokens or 1)
    assert saving == pytest.approx(step_bf16 / step_int8)  # about 1.8x cheaper per token


def test_the_review_compares_each_regions_cost_per_million_tokens(plan: InferencePlan) -> None:
    figures = plan_figures(plan)
    east = figures["serving us-east-1: cost per 1M tokens"]
    assert east.unit == PER_MILLION_TOKENS and east.value == Decimal("0.596")
    slower = checked("chat-serve", spec={"throughput_rps_per_replica": 0.75}).plan
    assert plan_figures(slower)["serving us-east-1: cost per 1M tokens"].value == Decimal("1.192")  # half the rate


def test_the_report_shows_both_tables_and_the_figure_reads_in_cents(plan: InferencePlan) -> None:
    from gpuinfra.report.build.stack import inference_summary
    from gpuinfra.report.format import figure

    sections = {s.title: s for s in inference_summary(plan)}
    regions = sections["Serving economics (per replica, on-demand)"]
    assert ["us-east-1", "g6.xlarge", "375", "737", "24", "$0.8048", "$0.596"] in regions.rows
    quantized = sections["Quantization on g6.xlarge in us-east-1"]
    assert [row[0] for row in quantized.rows] == ["bf16", "fp8", "int8", "int4"]
    assert quantized.rows[0][3] == "NO" and quantized.rows[0][-1] == "-"  # unknown, never $0
    assert figure(PER_MILLION_TOKENS, Decimal("0.596")) == "$0.596 per 1M tokens"


def test_a_pull_request_that_halves_the_rate_shows_the_cost_per_million_tokens_doubling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two previews as JSON documents, then `gpuinfra diff`: the figure change survives the documents."""
    from bad_inputs import run_cli
    from helpers import write_stack

    docs = []
    for label, rps in (("base", 1.5), ("head", 0.75)):
        folder = tmp_path / label
        folder.mkdir()
        stack = write_stack(folder, "chat-serve", spec={"throughput_rps_per_replica": rps})
        code, out, err = run_cli(capsys, monkeypatch, "preview", str(stack), "--format", "json")
        assert code == 0, err
        (folder / "preview.json").write_text(out)
        docs.append(str(folder / "preview.json"))
    code, out, err = run_cli(capsys, monkeypatch, "diff", *docs, "--format", "json")
    assert code == 0, err
    (stack,) = json.loads(out)["stacks"]
    figures = {f["name"]: f for f in stack["figures"]}
    east = figures["serving us-east-1: cost per 1M tokens"]
    assert (east["unit"], Decimal(east["before"]), Decimal(east["after"])) == (
        PER_MILLION_TOKENS,
        Decimal("0.596"),  # 0.8048 / (375 x 3600) x 1e6
        Decimal("1.192"),  # 0.8048 / (187.5 x 3600) x 1e6
    )
