"""The diff: resources added, removed and changed, update vs replace, cost deltas, findings that come and go."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import HOURS_PER_MONTH, price_graph
from gpuinfra.graph import SECRET, UNKNOWN, Graph
from gpuinfra.graph.readers import Step
from gpuinfra.review.diff import ReviewItem, Snapshot, diff_sides, walk
from gpuinfra.review.effects import replacements
from graphs import graph, group, provider, res
from helpers import ample_quotas, example_graph, graph_for

NODES = "aws-native:pcs:ComputeNodeGroup::llm-train-slurm-pcs-od"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem::llm-train-storage-lustre"


def snap(g: Graph, catalog: Catalog, findings: tuple[ReviewItem, ...] = (), steps: dict | None = None) -> Snapshot:  # type: ignore[type-arg]
    return Snapshot(g.stack, g, price_graph(g, catalog), findings, steps or {})


def diff(base: Graph, head: Graph, catalog: Catalog, **head_extra):  # type: ignore[no-untyped-def]
    return diff_sides(
        {base.stack: snap(base, catalog)}, {head.stack: snap(head, catalog, **head_extra)}, replacements()
    )


def verdict_of(d) -> int:  # type: ignore[no-untyped-def]
    """The exit code `gpuinfra diff` gives: the report's, from errors.verdict."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.report.build.diff import diff_report

    return diff_report(d, "base", "head", load_catalog()).exit_code


def by_name(d, name):  # type: ignore[no-untyped-def]
    return next(r for r in d.stacks[0].resources if r.name == name)


def test_same_graph_has_no_changes(catalog: Catalog) -> None:
    g = example_graph("llm-train")
    d = diff(g, g, catalog)
    assert d.stacks[0].resources == () and d.delta == 0 and d.stacks[0].status == "unchanged"


def test_doubling_a_training_cluster_doubles_the_compute_line_and_the_total_delta_is_exact(catalog: Catalog) -> None:
    spec = {"compute.capacity": {"type": "on_demand"}}
    base = graph_for("llm-train", spec, ample_quotas())
    head = graph_for("llm-train", {**spec, "compute.node_count": 32}, ample_quotas())
    d = diff(base, head, catalog)
    nodes = by_name(d, "llm-train-slurm-pcs-od")
    assert nodes.action == "update"
    assert {c.path: (c.before, c.after) for c in nodes.changes}["scalingConfiguration.maxInstanceCount"] == (16, 32)
    before_lines = price_graph(base, catalog).get(NODES).lines
    after_lines = price_graph(head, catalog).get(NODES).lines
    assert after_lines[0].monthly == 2 * before_lines[0].monthly
    od = catalog.on_demand("p5.48xlarge", "us-east-1")
    assert od is not None
    assert after_lines[0].monthly - before_lines[0].monthly == 16 * od.usd_per_hour * HOURS_PER_MONTH
    # 16 + 1 login nodes fit a SMALL PCS cluster, 33 need MEDIUM: Size is create-only, so the cluster is replaced.
    cluster = by_name(d, "llm-train-slurm-pcs-cluster")
    assert cluster.action == "replace"


def test_a_new_image_version_rolls_the_node_groups(catalog: Catalog) -> None:
    """A new SSM parameter version is a new AMI id on every node group: updated in place, instances replaced."""
    base = graph_for("llm-train")
    head = graph_for("llm-train", {"compute.image_id": "resolve:ssm:/acme/pcs/slurm-25.05/gpu-ami:8"})
    d = diff(base, head, catalog)
    for name in ("llm-train-slurm-pcs-od", "llm-train-slurm-pcs-elastic", "llm-train-slurm-pcs-login"):
        group = by_name(d, name)
        assert group.action == "update"
        (change,) = [c for c in group.changes if c.path == "amiId"]
        assert change.effect == "refresh" and change.before != change.after


def test_changing_the_lustre_deployment_type_is_a_replacement_with_a_cited_reason(catalog: Catalog) -> None:
    base = graph_for("llm-train")
    head = graph_for("llm-train", {"lustre.deployment_type": "PERSISTENT_1", "lustre.throughput_mb_s_per_tib": 200})
    d = diff(base, head, catalog)
    fs = by_name(d, "llm-train-storage-lustre")
    assert fs.action == "replace"
    reasons = {c.path: (c.effect, c.reason) for c in fs.changes}
    assert reasons["deploymentType"] == ("replace", "tfaws-pinned")
    p1, p2 = catalog.service("fsx_lustre/PERSISTENT_1/200"), catalog.service("fsx_lustre/PERSISTENT_2/250")
    assert p1 is not None and p2 is not None
    assert fs.delta == 57600 * (p1.usd - p2.usd)  # the example's 57,600 GiB (3 EFA steps), both before and after


@pytest.mark.parametrize(
    ("type_", "prop", "before", "after", "effect"),
    [
        ("aws:fsx/lustreFileSystem:LustreFileSystem", "storageCapacity", 2400, 4800, "update"),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", "storageCapacity", 4800, 2400, "replace"),
        ("aws:ec2/vpc:Vpc", "cidrBlock", "10.0.0.0/16", "10.1.0.0/16", "replace"),
        ("aws:ec2/vpc:Vpc", "enableDnsHostnames", False, True, "update"),
        ("aws:ec2/subnet:Subnet", "availabilityZone", "us-east-1a", "us-east-1b", "replace"),
        ("aws:autoscaling/group:Group", "mixedInstancesPolicy", {"a": 1}, {"a": 2}, "refresh"),
        ("aws:autoscaling/group:Group", "name", "a", "b", "replace"),
        ("aws:ec2/instance:Instance", "instanceType", "m7i.xlarge", "m7i.2xlarge", "update"),
        ("aws:ec2/instance:Instance", "privateIp", "10.0.0.10", "10.0.0.11", "replace"),
        ("aws:lb/loadBalancer:LoadBalancer", "internal", False, True, "replace"),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", "deploymentType", "PERSISTENT_2", UNKNOWN, "may-replace"),
    ],
)
def test_replacement_rules(catalog: Catalog, type_: str, prop: str, before: object, after: object, effect: str) -> None:
    p = provider()
    d = diff(graph(p, res(type_, "r", p, **{prop: before})), graph(p, res(type_, "r", p, **{prop: after})), catalog)
    (change,) = by_name(d, "r").changes
    assert change.effect == effect
    assert by_name(d, "r").action == ("replace" if effect == "replace" else "update")


def test_user_data_replaces_an_instance_only_with_replace_on_change(catalog: Catalog) -> None:
    p = provider()
    t = "aws:ec2/instance:Instance"
    quiet = diff(graph(p, res(t, "i", p, userData="a")), graph(p, res(t, "i", p, userData="b")), catalog)
    loud = diff(
        graph(p, res(t, "i", p, userData="a", userDataReplaceOnChange=True)),
        graph(p, res(t, "i", p, userData="b", userDataReplaceOnChange=True)),
        catalog,
    )
    assert by_name(quiet, "i").action == "update" and by_name(loud, "i").action == "replace"


def test_pulumi_replace_reasons_win_over_the_table(catalog: Catalog) -> None:
    p = provider()
    old, new = res("aws:s3/bucket:Bucket", "b", p, acl="a"), res("aws:s3/bucket:Bucket", "b", p, acl="b")
    step = Step("replace", new.urn, new.type, ("acl",), ("acl",))
    d = diff(graph(p, old), graph(p, new), catalog, steps={new.urn: step})
    (change,) = by_name(d, "b").changes
    assert by_name(d, "b").action == "replace" and (change.effect, change.reason) == ("replace", "pulumi")


def test_resources_match_by_type_and_name_not_urn(catalog: Catalog) -> None:
    p = provider()
    vpc = res("aws:ec2/vpc:Vpc", "vpc", p, cidrBlock="10.0.0.0/16")
    moved = replace(vpc, urn=vpc.urn.replace("::aws:ec2", "::gpuinfra:x:Network$aws:ec2"))
    assert diff(graph(p, vpc), graph(p, moved), catalog).stacks[0].resources == ()


def test_added_and_removed_resources_carry_their_whole_cost(catalog: Catalog) -> None:
    p = provider()
    nat = res("aws:ec2/natGateway:NatGateway", "nat", p)
    added = diff(graph(p), graph(p, nat), catalog)
    removed = diff(graph(p, nat), graph(p), catalog)
    hourly = catalog.service("nat/gateway")
    assert hourly is not None
    assert by_name(added, "nat").action == "create" and added.delta == hourly.usd * HOURS_PER_MONTH
    assert by_name(removed, "nat").action == "delete" and removed.delta == -hourly.usd * HOURS_PER_MONTH


def test_a_stack_only_on_one_side_is_added_or_removed(catalog: Catalog) -> None:
    p = provider()
    g = graph(p, *group("g", p, "g6.xlarge", 2))
    d = diff_sides({}, {g.stack: snap(g, catalog)}, replacements())
    assert d.stacks[0].status == "added"
    assert {r.action for r in d.stacks[0].resources} == {"create"}
    assert d.delta == price_graph(g, catalog).monthly


def test_cost_only_changes_are_reported_even_when_inputs_are_equal(catalog: Catalog) -> None:
    from gpuinfra.cost import ResourceUsage, Usage, UsageFile

    p = provider()
    bucket = res("aws:s3/bucket:Bucket", "b", p)
    g = graph(p, bucket)
    more = Usage(UsageFile(resource_usage={"b": ResourceUsage(storage_gb=Decimal(100))}))
    d = diff_sides(
        {"s": Snapshot("s", g, price_graph(g, catalog))},
        {"s": Snapshot("s", g, price_graph(g, catalog, more))},
        replacements(),
    )
    (row,) = d.stacks[0].resources
    assert row.action == "same" and row.before is None and row.delta is None  # unknown before: no delta
    d2 = diff_sides(
        {"s": Snapshot("s", g, price_graph(g, catalog, more))},
        {"s": Snapshot("s", g, price_graph(g, catalog, more))},
        replacements(),
    )
    assert d2.stacks[0].resources == ()


def test_findings_are_compared_by_stack_rule_where_and_message(catalog: Catalog) -> None:
    g = graph(provider())
    kept = ReviewItem("s", "validator", "a", "warning", "x", "same")
    gone = ReviewItem("s", "validator", "b", "warning", "y", "fixed")
    new = ReviewItem("s", "policy", "c", "mandatory", "vpc", "violates")
    d = diff_sides(
        {"s": Snapshot("s", g, None, (kept, gone))}, {"s": Snapshot("s", g, None, (kept, new))}, replacements()
    )
    s = d.stacks[0]
    assert s.new_findings == (new,) and s.resolved_findings == (gone,)
    assert verdict_of(d) == 1


def test_a_finding_whose_figure_moved_is_neither_new_nor_resolved(catalog: Catalog) -> None:
    """A resize moves the total inside cost-partial's message: the warning still holds on both sides (same rule,
    same place), so the review calls it neither new nor resolved; a second finding of the rule at that place with
    no counterpart is new, and one at another place that went away is resolved."""
    g = graph(provider())
    low = ReviewItem("s", "validator", "cost-partial", "warning", "", "at least $81,903.55")
    high = ReviewItem("s", "validator", "cost-partial", "warning", "", "at least $122,123.71")
    extra = ReviewItem("s", "validator", "cost-partial", "warning", "", "another")
    gone = ReviewItem("s", "validator", "lustre-too-small", "error", "lustre", "needs 76,800 GiB")
    d = diff_sides(
        {"s": Snapshot("s", g, None, (low, gone))}, {"s": Snapshot("s", g, None, (high, extra))}, replacements()
    )
    s = d.stacks[0]
    assert len(s.new_findings) == 1 and s.new_findings[0].rule == "cost-partial"  # one of the two is paired
    assert s.resolved_findings == (gone,)
    assert s.head_findings == (high, extra)


def test_advisory_and_warning_findings_do_not_block(catalog: Catalog) -> None:
    g = graph(provider())
    head = (ReviewItem("s", "policy", "c", "advisory", "", "m"), ReviewItem("s", "validator", "w", "warning", "", "m"))
    assert verdict_of(diff_sides({}, {"s": Snapshot("s", g, None, head)}, replacements())) == 0


def test_walk_lists_leaf_paths_and_skips_equal_secrets() -> None:
    before = {"a": {"b": [1, 2]}, "s": SECRET, "__defaults": ["x"], "gone": 1}
    after = {"a": {"b": [1, 3, 4]}, "s": SECRET, "__defaults": ["y"]}
    paths = {p: (b, a) for p, b, a in walk(before, after)}
    assert set(paths) == {"a.b[1]", "a.b[2]", "gone"}
    assert paths["a.b[1]"] == (2, 3)


def test_a_side_without_a_graph_is_not_compared_resource_by_resource(catalog: Catalog) -> None:
    g = example_graph("llm-train")
    error = ReviewItem("llm-train", "validator", "spot-checkpoint-interval-too-long", "error", "checkpointing", "m")
    d = diff_sides({g.stack: snap(g, catalog)}, {g.stack: Snapshot(g.stack, None, None, (error,))}, replacements())
    s = d.stacks[0]
    assert s.status == "not-previewed" and s.resources == ()
    assert s.total("after") is None and d.delta is None  # unknown, never zero
    assert verdict_of(d) == 1


def test_adding_an_inference_region_adds_only_that_regions_resources(catalog: Catalog) -> None:
    from helpers import example_data

    regions = example_data("chat-serve")["config"]["gpuinfra:inference"]["regions"]
    added = regions[-1]["region"]
    base, head = graph_for("chat-serve", {"regions": regions[:-1]}), graph_for("chat-serve")
    d = diff(base, head, catalog)
    rows = d.stacks[0].resources
    assert rows and {r.action for r in rows} == {"create"}
    assert all(added in r.name for r in rows)
    assert d.delta == sum((r.delta for r in rows if r.delta is not None), Decimal(0)) > 0
    # the region's own resources, plus its Route 53 health check (billed through the us-east-1 provider)
    regional = price_graph(head, catalog).by("region")[added][0]
    assert regional <= d.delta


def test_tags_are_compared_by_key_not_position() -> None:
    before = {"tags": [{"key": "a", "value": "1"}, {"key": "c", "value": "3"}]}
    after = {"tags": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}, {"key": "c", "value": "4"}]}
    paths = {p: (b, a) for p, b, a in walk(before, after)}
    assert set(paths) == {"tags[b]", "tags[c].value"}
    assert paths["tags[c].value"] == ("3", "4")
