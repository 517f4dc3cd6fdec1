"""How long the policy pack takes in-process over large graphs (`python -m bench.policies`).

The example stacks' graphs are copied side by side (every URN, name, parent, provider and dependency
suffixed per copy) until they hold about 10,000 resources, then the whole pack runs over them the way
`gpuinfra preview` runs it: the graph priced once (gpuinfra.cost), the pack handed that cost. The budget is
shared with cost and diff: all three under 1 s together.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gpuinfra.catalog import load_catalog  # noqa: E402
from gpuinfra.plan import build_plan  # noqa: E402
from gpuinfra.policy.facts import StackFacts  # noqa: E402
from gpuinfra.policy.pack import pack_config, police  # noqa: E402
from gpuinfra.policy.rules.budget import estimate_monthly  # noqa: E402
from helpers import example_graph, inputs_for  # noqa: E402

from bench.synthetic import scaled  # noqa: E402

TARGET = 10_000


def measure(stack: str, repeat: int = 5) -> tuple[int, float, float, int]:
    """(resources, median seconds of the pack, median seconds of pricing, violations) over ~TARGET resources."""
    base = example_graph(stack)
    graph = scaled(base, max(1, TARGET // len(base.resources)))
    inputs = inputs_for(stack)
    catalog = load_catalog()
    facts = StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog)
    config = pack_config()
    monthly = estimate_monthly(graph, facts)  # warm up: imports, catalog indexes
    police(graph, facts, config, monthly_cost=monthly)
    policy_times, cost_times, violations = [], [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        monthly = estimate_monthly(graph, facts)
        cost_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        run = police(graph, facts, config, monthly_cost=monthly)
        policy_times.append(time.perf_counter() - start)
        violations = len(run.violations)
    return len(graph.resources), statistics.median(policy_times), statistics.median(cost_times), violations


def main() -> None:
    print("| stack | resources | policies | pricing (gpuinfra.cost) | violations |")
    print("|---|---:|---:|---:|---:|")
    for stack in ("llm-train", "chat-serve", "chat-serve-k8s", "model-registry"):
        n, policies, cost, violations = measure(stack)
        print(f"| {stack} | {n:,} | {policies * 1000:.0f} ms | {cost * 1000:.0f} ms | {violations} |")


if __name__ == "__main__":
    main()
