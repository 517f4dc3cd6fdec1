"""A stack report's findings as a review reads them: what a preview's snapshot and a cached entry's snapshot
both carry, made one way."""

from __future__ import annotations

from gpuinfra.report.model import StackReport
from gpuinfra.review.diff import ReviewItem
from gpuinfra.review.documents import findings_of


def review_items(stack: StackReport) -> tuple[ReviewItem, ...]:
    """The validator findings, policy violations and preflight findings of `stack`, as review items."""
    shaped = stack.model_dump(mode="json", include={"findings": True, "policy": {"violations"}, "preflight": True})
    return findings_of(stack.stack, shaped)


__all__ = ["review_items"]
