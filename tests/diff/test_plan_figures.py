"""The pull-request comment shows the plan's money figures where a change moves them."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.plan.figures import Figure, plan_figures
from gpuinfra.report.model import DiffReport, FigureChangeOut, StackDiffOut, money_change
from gpuinfra.report.render.markdown import render_diff_markdown
from gpuinfra.review.diff import Snapshot, diff_stack, figure_changes
from helpers import checked


def test_only_figures_that_differ_are_compared() -> None:
    base = Snapshot("s", None, figures={"run: days": Figure("days", Decimal("10.0")), "x": Figure("usd", None)})
    head = Snapshot("s", None, figures={"run: days": Figure("days", Decimal("20.0")), "x": Figure("usd", None)})
    (change,) = figure_changes(base, head)
    assert (change.name, change.unit, change.before, change.after) == ("run: days", "days", Decimal(10), Decimal(20))
    assert figure_changes(base, base) == ()
    assert diff_stack(base, head, {}).figures == (change,)  # type: ignore[arg-type]


def test_training_example_has_run_figures_and_onprem_ownership() -> None:
    train = plan_figures(checked("llm-train").plan)
    assert train["training run: cost per run"].unit == "usd"
    assert train["training run: cost per run"].value is not None
    onprem = plan_figures(checked("llm-train-onprem").plan)
    assert onprem["ownership: break-even month vs AWS on-demand"].value is not None
    serve = plan_figures(checked("chat-serve").plan)  # one cost per million tokens per region, and its failover
    assert sorted(k for k in serve if k.startswith("serving")) == [
        f"serving {r}: cost per 1M tokens" for r in ("ap-northeast-1", "eu-central-1", "us-east-1", "us-west-2")
    ]
    # Headroom with the largest other region lost: us-east-1 holds 26 x 1.5 = 39 against 24 + 14 = 38.
    assert serve["failover us-east-1: headroom with us-west-2 lost"].value == Decimal("1.0")
    assert len([k for k in serve if k.startswith("failover")]) == 4
    assert plan_figures(checked("model-registry").plan) == {}


def test_comment_shows_the_changed_figure() -> None:
    zero = Decimal(0)
    stack = StackDiffOut(
        stack="llm-train",
        status="changed",
        monthly=money_change(zero, zero, zero, (zero, zero), (zero, zero)),
        figures=[
            FigureChangeOut(
                name="training run: cost per run", unit="usd", before=Decimal(1560503), after=Decimal(3121005)
            )
        ],
    )
    report = DiffReport(
        base="b",
        head="h",
        monthly=money_change(zero, zero, zero, (zero, zero), (zero, zero)),
        stacks=[stack],
    )
    assert "| training run: cost per run | $1,560,503 | $3,121,005 |" in render_diff_markdown(report)
