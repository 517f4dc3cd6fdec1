"""Serving economics of the chat-serve example, computed by hand: tokens/s per replica, concurrency, cost per
million tokens per region, and what quantizing the weights changes on the same instance.

Figures: Llama-3.1-8B's KV cache shape (32 layers, 8 KV heads, head_dim 128: the model's config.json) at fp8 is
2 x 32 x 8 x 128 x 1 B = 65,536 B per token; NVIDIA L4 300 GB/s and 24 GB (22,888 MiB as the GPU reports it),
L40S 864 GB/s and 48 GB (45,776 MiB) from the datasheets (catalog serving.yaml); on-demand g6.xlarge us-east-1
$0.8048/h and g6e.xlarge ap-northeast-1 $2.699/h from ec2instances.info's 2026-01-21 snapshot (sources.yaml
`van-od`). The calibrated ceiling (plan/roofline.py, fitted in tests/plan/test_calibration.py): a decode step
reads weights + batch x KV bytes of the mean context at 60% of the bandwidth, its 2 x parameters x batch FLOPs
and the step's share of prefill (batch x input/output tokens x 2 x parameters) run at the precision's matmul
efficiency (fp8 0.560 of the fp8 peak for fp8/int8 weights, bf16 0.687 of the bf16 peak for bf16/int4: L4
242.5/121 TFLOPS, L40S 733/362, the datasheets halved);
tokens/s = batch / (max(read, decode FLOPs) + prefill).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.figures import PER_MILLION_TOKENS, plan_figures
from gpuinfra.plan.tokens import cost_per_million_tokens
from helpers import checked

MIB = 2**20
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 1
CONTEXT = 1000 + 250 / 2  # input tokens + half the output, the mean a sequence holds while decoding
BATCH = 36  # max_concurrent_sequences; the KV cache left after the weights holds more (checked below)
PLANNED = 1.5 * 250  # throughput_rps_per_replica x output tokens


FP8, BF16 = 0.560, 0.687
"""The share of the fp8 and bf16 peaks matmuls reach (plan/throughput.py EFFICIENCY.gemm; Ada has no generation
factor); decode reads at 60% of the bandwidth (plan/roofline.py DECODE_BANDWIDTH_EFFICIENCY)."""


def ceiling(
    bandwidth_gb_s: float, peak_tflops: float, weights: float, kv_per_token: int = KV_PER_TOKEN, matmul: float = FP8
) -> float:
    read = (weights + BATCH * kv_per_token * CONTEXT) / (bandwidth_gb_s * 1e9 * 0.60)
    flops = peak_tflops * 1e12 * matmul
    decode, prefill = 2 * 8e9 * BATCH / flops, 2 * 8e9 * BATCH * 1000 / 250 / flops
    return BATCH / (max(read, decode) + prefill)


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
    # read 59.19 ms (10.65 GB at 180 GB/s), decode FLOPs 4.24 ms, prefill 16.97 ms: 36 / 76.16 ms = 472.7 tokens/s
    assert l4.bound_tokens_per_s == pytest.approx(ceiling(300, 242.5, 8e9))
    assert l4.bound_tokens_per_s == pytest.approx(472.7, abs=0.1)
    kv_room = int(22888 * MIB * 0.9) - 8e9 - 2**30  # less vLLM's activation workspace
    assert kv_room // (KV_PER_TOKEN * CONTEXT) >= BATCH and l4.concurrency == BATCH
    assert l4.usd_per_hour == Decimal("0.8048")
    assert l4.usd_per_million_tokens == per_million("0.8048", PLANNED)  # $0.596
    assert float(l4.usd_per_million_tokens) == pytest.approx(0.5961, abs=1e-4)
    l40s = rows["ap-northeast-1"]
    assert l40s.instance_type == "g6e.xlarge"
    assert l40s.bound_tokens_per_s == pytest.approx(ceiling(864, 733, 8e9))  # 1,376 tokens/s
    assert float(l40s.usd_per_million_tokens or 0) == pytest.approx(2.699 / (375 * 3600) * 1e6)  # $1.999


def test_quantization_shows_the_change_in_fit_throughput_and_cost(plan: InferencePlan) -> None:
    econ = plan.economics
    assert econ is not None
    assert (econ.quantization_region, econ.quantization_instance) == ("us-east-1", "g6.xlarge")
    points = {p.precision: p for p in econ.quantization}
    usable = int(22888 * MIB * 0.9) - 2**30
    # vLLM admits bf16 weights (16 GB) with one 8,192-token fp8 sequence (0.54 GB) on the L4 (20.5 GB after the
    # workspace), but g6.xlarge's 16 GiB of host RAM cannot load 16 GB of weights (75% = 12.9 GB): not usable.
    assert usable > 16e9 + KV_PER_TOKEN * 8192 and 16e9 > 16 * 2**30 * 0.75 and not points["bf16"].fits
    assert points["bf16"].usd_per_million_tokens is None  # does not fit: no price, not zero
    # fp8 is the spec: the planned rate. int8 weights are one byte too: the same fit, rate and cost.
    assert points["fp8"].tokens_per_s == PLANNED
    assert points["int8"].fits and points["int8"].tokens_per_s == pytest.approx(PLANNED)
    # int4 halves the weights again (the read falls to 36.97 ms) but W4A16 runs its matmuls at the bf16 peak (at
    # bf16's higher matmul efficiency), which raises prefill to 27.72 ms and decode FLOPs to 6.93 ms: 36 / 64.68 ms
    # = 556.5 tokens/s, 18% above fp8.
    ratio = ceiling(300, 121, 4e9, matmul=BF16) / ceiling(300, 242.5, 8e9)
    assert ratio == pytest.approx(556.55 / 472.71, abs=1e-3)
    int4 = points["int4"]
    assert int4.fits and int4.tokens_per_s == pytest.approx(PLANNED * ratio)  # 442 tokens/s
    assert float(int4.usd_per_million_tokens or 0) == pytest.approx(0.8048 / (PLANNED * ratio * 3600) * 1e6)
    assert float(int4.usd_per_million_tokens or 0) < float(points["fp8"].usd_per_million_tokens or 0)


def test_a_bf16_spec_shows_what_int8_weights_save() -> None:
    """The same fleet at bf16 on L40S: int8 weights halve the bytes each decode step reads and run W8A8 at the
    int8 (= fp8) rate, so the same instance serves more tokens an hour and a million cost less by that ratio."""
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
    assert points["bf16"].concurrency == BATCH
    # bf16: read 41.10 ms + prefill 9.26 ms = 714.7 tokens/s; int8: read 25.67 ms + prefill 5.61 ms = 1,150.7.
    rate = ceiling(864, 733, 8e9, kv) / ceiling(864, 362, 16e9, kv, BF16)
    assert rate == pytest.approx(1150.71 / 714.73, abs=1e-3)
    assert points["int8"].tokens_per_s == pytest.approx(250 * rate)
    saving = float(points["bf16"].usd_per_million_tokens or 0) / float(points["int8"].usd_per_million_tokens or 1)
    assert saving == pytest.approx(rate)  # about 1.7x cheaper per token


def test_the_review_compares_each_regions_cost_per_million_tokens(plan: InferencePlan) -> None:
    figures = plan_figures(plan)
    east = figures["serving us-east-1: cost per 1M tokens"]
    assert east.unit == PER_MILLION_TOKENS and east.value == Decimal("0.596")
    slower = checked("chat-serve", spec={"throughput_rps_per_replica": 0.75}).plan
    assert plan_figures(slower)["serving us-east-1: cost per 1M tokens"].value == Decimal("1.192")  # half the rate


def test_the_report_shows_both_tables_and_the_figure_reads_in_cents(plan: InferencePlan) -> None:
    from gpuinfra.report.build.stack import inference_summary
    from gpuinfra.report.format import figure

    sections = {s.title: s for s in inference_summary(plan, load_catalog().engine("vllm"))}
    regions = sections["Serving economics (per replica, on-demand)"]
    assert ["us-east-1", "g6.xlarge", "375", "473", "36", "$0.8048", "$0.596"] in regions.rows
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
        # failover none (and its shortfall accepted): at half the rate the failover maxima double, past the example
        # account's quota grants.
        spec = {
            "throughput_rps_per_replica": rps,
            "failover": "none",
            "suppress": ["rollout-without-rollback", "failover-short"],
        }
        stack = write_stack(folder, "chat-serve", spec=spec)
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


def test_a_mixture_of_experts_computes_on_its_active_parameters() -> None:
    """model.active_parameters_billion: prefill and decode FLOPs are 2 x active a token, the weights read stay all
    of them. 2B of 8B active makes the compute-only bound 4x; the bandwidth bound is unchanged."""
    dense = checked("chat-serve").plan
    moe = checked("chat-serve", spec={"model.active_parameters_billion": 2.0}).plan
    assert isinstance(dense, InferencePlan) and isinstance(moe, InferencePlan)
    d, m = dense.regions[0].bound, moe.regions[0].bound
    assert d is not None and m is not None and d.compute_tokens_per_s and m.compute_tokens_per_s
    assert m.compute_tokens_per_s == pytest.approx(4 * d.compute_tokens_per_s)
    assert m.bandwidth_tokens_per_s == pytest.approx(d.bandwidth_tokens_per_s)


def test_active_parameters_cannot_exceed_the_total() -> None:
    from gpuinfra.spec.inference import ServedModel

    with pytest.raises(ValueError, match="active_parameters_billion cannot exceed"):
        ServedModel.model_validate(
            {
                "name": "m",
                "parameters_billion": 8,
                "active_parameters_billion": 9,
                "context_length_tokens": 4096,
                "kv_cache": {"layers": 32, "kv_heads": 8, "head_dim": 128},
                "weights_prefix": "m/v1/",
            }
        )
