"""Stateful resources: protected by the program (Pulumi protect and retainOnDelete, lifted by a spec switch for
scratch stacks), and a replacement or deletion of one named first in the review, with what it loses."""

from __future__ import annotations

from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.render.markdown import render_diff_markdown
from gpuinfra.report.render.table import render_diff_table
from gpuinfra.review.diff import Snapshot, diff_sides
from gpuinfra.review.effects import replacements
from helpers import graph_for

TRAINING_STATEFUL = {
    ("aws:fsx/lustreFileSystem:LustreFileSystem", "llm-train-storage-lustre"),
    ("aws:s3/bucket:Bucket", "llm-train-storage-checkpoints"),
    ("aws:kms/key:Key", "llm-train-storage-key"),
}


def protected(stack: str, spec: dict | None = None) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    g = graph_for(stack, spec)
    both = {(r.type, r.name) for r in g.resources if r.protect and r.retain_on_delete}
    either = {(r.type, r.name) for r in g.resources if r.protect or r.retain_on_delete}
    assert both == either  # the two options always go together
    return both


def test_the_file_system_checkpoint_bucket_and_key_are_protected() -> None:
    assert protected("llm-train") == TRAINING_STATEFUL


def test_a_scratch_stack_lifts_the_protection() -> None:
    assert protected("llm-train", {"protect_data": False}) == set()


def test_the_registry_buckets_and_keys_are_protected() -> None:
    found = protected("model-registry")
    types = {t for t, _ in found}
    assert types == {"aws:s3/bucket:Bucket", "aws:kms/key:Key"}
    g = graph_for("model-registry")
    buckets = [r for r in g.resources if r.type == "aws:s3/bucket:Bucket"]
    keys = [r for r in g.resources if r.type == "aws:kms/key:Key"]
    assert len(found) == len(buckets) + len(keys) and buckets and keys


def _review(base, head, catalog: Catalog):  # type: ignore[no-untyped-def]
    d = diff_sides(
        {base.stack: Snapshot(base.stack, base, price_graph(base, catalog))},
        {head.stack: Snapshot(head.stack, head, price_graph(head, catalog))},
        replacements(),
    )
    return d, diff_report(d, "main", "head", catalog)


def test_a_create_only_fsx_change_is_a_replacement_of_stateful_data_in_the_headline(catalog: Catalog) -> None:
    """Lustre deploymentType is ForceNew: the 48,000 GiB file system is replaced, and the comment says so first."""
    base = graph_for("llm-train")
    head = graph_for("llm-train", {"lustre.deployment_type": "PERSISTENT_1", "lustre.throughput_mb_s_per_tib": 200})
    d, report = _review(base, head, catalog)
    (loss,) = d.losses
    assert (loss.action, loss.name, loss.protected) == ("replace", "llm-train-storage-lustre", True)
    capacity = next(r for r in base.resources if r.name == "llm-train-storage-lustre").inputs["storageCapacity"]
    assert loss.lost.startswith(f"{capacity:,} GiB: ")
    text = render_diff_markdown(report)
    heading, rest = text.split("\n", 2)[1:]
    assert heading.startswith("## gpuinfra: ⚠️ destroys stored data (1)")
    assert rest.lstrip().startswith("- ⚠️ **replace** `llm-train-storage-lustre`")
    assert "protected, so `pulumi up` stops at this step" in rest.split("\n\n", 1)[0]
    table = render_diff_table(report).splitlines()
    assert table[1].startswith("STATEFUL DATA: replace llm-train-storage-lustre (LustreFileSystem")


def test_throughput_is_not_a_loss_and_the_headline_leads_with_cost(catalog: Catalog) -> None:
    base = graph_for("llm-train", {"lustre.throughput_mb_s_per_tib": 250})
    head = graph_for("llm-train", {"lustre.throughput_mb_s_per_tib": 500})
    d, report = _review(base, head, catalog)
    assert d.losses == []
    heading = render_diff_markdown(report).split("\n")[1]
    # no stored data destroyed; what rolls comes before the money (report/build/disruption.py), then the cost: the
    # spot nodes' interruption watcher carries the checkpoint's write time, which the throughput sets, and the
    # example's spot nodes are its elastic ones (the gang is on its reservation, without the watcher)
    assert "destroys stored data" not in heading and "monthly cost +" in heading, heading
    rolls = "## gpuinfra: 🔄 1 group rolls its instances (llm-train-slurm-pcs-elastic); monthly cost +"
    assert heading.startswith(rolls)


def test_deleting_the_checkpoint_bucket_is_named_with_what_it_loses(catalog: Catalog) -> None:
    base = graph_for("llm-train")
    checkpoints = base.named("aws:s3/bucket:Bucket", "llm-train-storage-checkpoints")
    head = type(base).of(base.stack, base.project, (r for r in base.resources if r is not checkpoints))
    d, _ = _review(base, head, catalog)
    (loss,) = d.losses
    assert loss.action == "delete" and loss.name == "llm-train-storage-checkpoints"
    assert "every object" in loss.lost
