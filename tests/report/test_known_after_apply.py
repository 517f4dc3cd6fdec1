"""Values the embedded engine stands in for (ids, ARNs, autonamed names, a launch template's version, an image
read from SSM) are known only after apply: a review shows them as "(known after apply)" in every format, never
as if real. The change below touches every class of stand-in the mocks hand out for a training cluster."""

from __future__ import annotations

import json

from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import KNOWN_AFTER_APPLY, change_out, diff_report
from gpuinfra.report.format import readable
from gpuinfra.report.render import FORMATS
from gpuinfra.review.diff import MISSING, Change, Snapshot, diff_sides
from gpuinfra.review.effects import replacements
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
        replacements(),
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


def test_a_stand_in_inside_a_policy_or_user_data_is_unknown_in_every_format(catalog: Catalog) -> None:
    """A real diff of llm-train (the checkpoint export prefix moves): the nodes' role policies change, and their
    documents name the storage key by its stand-in ARN; the login node's user data changes, and it mounts Lustre by
    its stand-in DNS and mount names. No format shows one of them; the bucket's ARN, which AWS builds from the
    name the stack gives (arn:aws:s3:::<bucket>), is real and stays."""
    base = graph_for("llm-train", {}, ample_quotas())
    head = graph_for("llm-train", {"lustre.export_path": "s3://acme-llm-train-checkpoints/ckpt2/"}, ample_quotas())
    diff = diff_sides(
        {"llm-train": Snapshot("llm-train", base, price_graph(base, catalog))},
        {"llm-train": Snapshot("llm-train", head, price_graph(head, catalog))},
        replacements(),
    )
    inside: dict[str, set[str]] = {}  # property -> stand-ins inside its changed text (as the table reads it)
    for s in diff.stacks:
        for r in s.resources:
            for c in r.changes:
                for value, graph in ((c.before, base), (c.after, head)):
                    text = readable(value) or ""
                    found = {v for v in graph.after_apply if len(v) >= 8 and not v.isdigit() and v in text}
                    inside.setdefault(c.path, set()).update(v for v in found if v != text)
    key_arn = next(v for v in inside["policy"] if v.startswith("arn:aws:kms:"))
    assert any(".fsx.us-east-1.amazonaws.com" in v for v in inside["userData"]), inside["userData"]
    report = diff_report(diff, "main", "head", catalog)
    for fmt, render in FORMATS.items():
        text = render(report)
        leaked = {v for found in inside.values() for v in found if v in text}
        assert not leaked, (fmt, leaked)
        if fmt != "mermaid":  # a picture of resources, without their properties
            assert "arn:aws:s3:::acme-llm-train-checkpoints/ckpt2/*" in text, fmt
    policy = next(c.after for s in report.stacks for r in s.resources for c in r.changes if c.path == "policy")
    kms = [st for st in json.loads(policy)["Statement"] if any(a.startswith("kms:") for a in st["Action"])]
    assert key_arn not in policy and [KNOWN_AFTER_APPLY] in [st["Resource"] for st in kms], kms
    assert "arn:aws:kms:us-east-1:333333333333:key/*" in policy  # another account's keys: written by the stack, real


def test_a_stand_in_is_masked_whole_and_longest_first() -> None:
    """The FSx mount name (8 characters) is inside the file system's id and DNS name: each goes whole."""
    graph = example_graph("llm-train")
    dns = next(v for v in graph.after_apply if v.endswith(".fsx.us-east-1.amazonaws.com"))
    mount = next(v for v in graph.after_apply if len(v) == 8 and v in dns)
    line = f"{dns}@tcp:/{mount} /fsx lustre defaults 0 0; not{mount}; {mount}x"
    assert graph.masked(line, "?") == f"?@tcp:/? /fsx lustre defaults 0 0; not{mount}; {mount}x"
