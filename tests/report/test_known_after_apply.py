"""Values the embedded engine stands in for (ids, ARNs, autonamed names, a launch template's version, an image
read from SSM) are known only after apply: a review shows them as "(known after apply)" in every format, never
as if real. The change below touches every class of stand-in the mocks hand out for a training cluster."""

from __future__ import annotations

import json

from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import KNOWN_AFTER_APPLY, change_out, diff_report
from gpuinfra.report.render import FORMATS
from gpuinfra.review.diff import MISSING, Change, Snapshot, diff_sides
from gpuinfra.review.replacements import load_rules
from helpers import ample_quotas, example_graph, graph_for

CLASSES = {
    "version": "(the template's version after apply",
    "ssm image": "(read at deploy from SSM",
    "id or arn": "(known after apply)",
    "autonamed": "-<random> (autonamed at apply)",
    "read at deploy": "(read at deploy: ",
}
"""Each class of stand-in (pulumi/engine/mocks.py) by what it stands for."""


def kind(meaning: str) -> str:
    return next(k for k, part in CLASSES.items() if part in meaning)


def test_every_stand_in_class_is_rendered_unknown_in_every_format(catalog: Catalog) -> None:
    base = graph_for("llm-train", {}, ample_quotas())
    change = {
        "compute.node_count": 18,  # node groups resized (no user data changes: the login node stays)
        "lustre.throughput_mb_s_per_tib": 500,  # the spot nodes' checkpoint window -> a new template version
        "availability_zone": "us-east-1b",  # subnets replaced -> every reference to their ids changes
        "compute.image_id": "resolve:ssm:/acme/pcs/slurm-25.05/gpu-ami:8",  # another SSM version -> another AMI
    }
    head = graph_for("llm-train", change, ample_quotas())
    diff = diff_sides(
        {"llm-train": Snapshot("llm-train", base, price_graph(base, catalog))},
        {"llm-train": Snapshot("llm-train", head, price_graph(head, catalog))},
        load_rules(),
    )
    stand_ins: dict[str, str] = {}  # a changed value that is a stand-in -> its class
    for s in diff.stacks:
        for r in s.resources:
            for c in r.changes:
                for value, graph in ((c.before, base), (c.after, head)):
                    if value is MISSING or isinstance(value, bool) or not isinstance(value, str | int):
                        continue
                    meaning = graph.after_apply.get(str(value))
                    if meaning is not None:
                        stand_ins[str(value)] = kind(meaning)
    assert set(stand_ins.values()) == {"version", "ssm image"}, stand_ins  # what new user data and a new image change

    report = diff_report(diff, "main", "head", catalog)
    shown = {(c.before, c.after) for s in report.stacks for r in s.resources for c in r.changes}
    assert any(KNOWN_AFTER_APPLY in pair for pair in shown)
    for fmt, render in FORMATS.items():
        text = render(report)
        for value, which in stand_ins.items():
            assert value not in text, (fmt, which, value)
    json.loads(FORMATS["json"](report))


def test_every_stand_in_the_examples_hold_is_shown_unknown(catalog: Catalog) -> None:
    """Every stand-in of three examples (training on PCS, inference on EC2 and on Kubernetes), whatever its
    class, is a property change's "(known after apply)" on both sides."""
    seen: set[str] = set()
    for stack in ("llm-train", "chat-serve", "chat-serve-k8s"):
        graph = example_graph(stack)
        for value, meaning in graph.after_apply.items():
            seen.add(kind(meaning))
            for raw in (value, int(value)) if value.isdigit() else (value,):
                out = change_out(Change("x", raw, raw, "update"), catalog, (graph, graph))
                assert (out.before, out.after) == (KNOWN_AFTER_APPLY, KNOWN_AFTER_APPLY), (stack, value, meaning)
    assert seen == set(CLASSES), seen
