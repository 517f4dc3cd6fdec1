"""The stages a preview runs, each callable alone so it can be timed alone. They call the same functions
`gpuinfra preview` and `gpuinfra diff` call; nothing here is a re-implementation."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.commands.preview import preview_stacks
from gpuinfra.cost import Usage, assumed_usage, price_graph
from gpuinfra.graph import Graph
from gpuinfra.plan import AnyPlan
from gpuinfra.policy.pack import pack_config, police_stack
from gpuinfra.pulumi.preview import preview_graph
from gpuinfra.report.render.json import render_json
from gpuinfra.validators import Level
from gpuinfra.validators.checked import Checked
from gpuinfra.workspace.check import check_stack


@dataclass
class Prepared:
    """One scenario, loaded once: its inputs, plan and graph, so each stage can be timed alone."""

    path: Path
    checked: Checked
    graph: Graph

    @classmethod
    def of(cls, path: Path) -> Prepared:
        checked = check_stack(path)
        if checked.blocked:  # a refused stack previews in milliseconds: timing it would measure nothing
            refused = "; ".join(f"{f.rule}: {f.message}" for f in checked.findings if f.level >= Level.ERROR)
            raise SystemExit(f"bench: {path.name} is refused by the validators ({refused})")
        return cls(path, checked, preview_graph(checked.inputs, checked.plan))

    @property
    def plan(self) -> AnyPlan:
        return self.checked.plan


def validate(p: Prepared) -> Callable[[], object]:
    return lambda: check_stack(p.path)


def engine(p: Prepared) -> Callable[[], object]:
    checked = check_stack(p.path)
    return lambda: preview_graph(checked.inputs, checked.plan)


def cost(p: Prepared) -> Callable[[], object]:
    catalog, plan = load_catalog(), p.plan
    return lambda: price_graph(p.graph, catalog, Usage().with_assumed(assumed_usage(plan, p.graph)))


def monthly(p: Prepared) -> Decimal | None:
    return price_graph(p.graph, load_catalog(), Usage().with_assumed(assumed_usage(p.plan, p.graph))).monthly


def policies(p: Prepared) -> Callable[[], object]:
    config, total = pack_config(), monthly(p)
    return lambda: police_stack(p.checked.inputs, p.checked.plan, p.graph, config, total)


def preflight(p: Prepared) -> Callable[[], object]:
    from gpuinfra.preflight import preflight as judge

    catalog = load_catalog()
    return lambda: judge(p.graph, catalog)


def preflight_cold(p: Prepared, folder: Path) -> float:
    """Seconds a fresh process spends on its first preflight of the graph: imports, botocore models, schemas
    and the run (what one `gpuinfra preview` pays once)."""
    import pickle
    import subprocess
    import sys

    saved = folder / "graph.pickle"
    saved.write_bytes(pickle.dumps(p.graph))
    script = (
        "import pickle, sys, time; graph = pickle.loads(open(sys.argv[1], 'rb').read());"
        " from gpuinfra.catalog import load_catalog; catalog = load_catalog(); t = time.perf_counter();"
        " from gpuinfra.preflight import preflight; preflight(graph, catalog); print(time.perf_counter() - t)"
    )
    done = subprocess.run([sys.executable, "-c", script, str(saved)], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def preview(path: Path) -> Callable[[], str]:
    """`gpuinfra preview --format json` end to end, minus process start-up."""
    return lambda: render_json(preview_stacks([str(path)]))


def preview_document(path: Path, out: Path) -> Path:
    out.write_text(preview(path)())
    return out


def document_size(path: Path) -> int:
    return len(json.loads(path.read_text())["stacks"][0]["resources"] or [])


__all__ = [
    "Prepared",
    "cost",
    "document_size",
    "engine",
    "monthly",
    "policies",
    "preflight",
    "preflight_cold",
    "preview",
    "preview_document",
    "validate",
]
