"""The pull-request comment: total change first, then policy results, then a table per stack with the
property-level changes collapsed. Checked against a golden file (rewrite with `make goldens`)."""

from __future__ import annotations

import json
from pathlib import Path

from goldens.store import check_golden as store_check
from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.model import PropertyChangeOut
from gpuinfra.report.render.json import render_diff_json
from gpuinfra.report.render.markdown import render_diff_markdown
from gpuinfra.report.render.parts import MARKER, pair
from gpuinfra.report.render.table import render_diff_table
from gpuinfra.review.diff import ReviewItem, Snapshot, diff_sides
from gpuinfra.review.effects import replacements
from graphs import graph, group, provider, res

GOLDEN = Path(__file__).parent / "golden"


def sample(catalog: Catalog):  # type: ignore[no-untyped-def]
    p = provider()
    lt, asg = group("train", p, "p5.48xlarge", 4)
    _, bigger = group("train", p, "p5.48xlarge", 8)
    fs_old = res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fs",
        p,
        deploymentType="PERSISTENT_2",
        perUnitStorageThroughput=125,
        storageCapacity=2400,
        storageType="SSD",
    )
    fs_new = res(
        fs_old.type, "fs", p, **{**fs_old.inputs, "deploymentType": "PERSISTENT_1", "perUnitStorageThroughput": 200}
    )
    nat = res("aws:ec2/natGateway:NatGateway", "nat", p)
    base, head = graph(p, lt, asg, fs_old), graph(p, lt, bigger, fs_new, nat)
    findings = (
        ReviewItem("s", "policy", "no-public-buckets", "mandatory", "bucket", "bucket is public"),
        ReviewItem("s", "policy", "tags-present", "advisory", "nat", "missing cost-center tag"),
    )
    gone = (ReviewItem("s", "validator", "quota-short", "warning", "account", "quota too small"),)
    d = diff_sides(
        {"s": Snapshot("s", base, price_graph(base, catalog), gone)},
        {"s": Snapshot("s", head, price_graph(head, catalog), findings)},
        replacements(),
    )
    return diff_report(d, "main (0123456789)", "working tree", catalog)


def check_golden(name: str, text: str, update: bool) -> None:
    store_check(GOLDEN / name, text, update)


def test_markdown_comment_golden(catalog: Catalog, update_goldens: bool) -> None:
    text = render_diff_markdown(sample(catalog))
    assert text.startswith(
        MARKER + "\n## gpuinfra: ❌ 1 blocking; ⚠️ destroys stored data (1); 🔄 4 nodes added; monthly cost +"
    )  # the group grows from 4 to 8 instances; the file system's replacement is said once, as data destroyed
    assert "- ⚠️ **replace** `fs` (`LustreFileSystem`, stack `s`): loses 2,400 GiB" in text
    assert text.index("destroys stored data") < text.index("### Policy and validation") < text.index("### `s`")
    assert "| ❌ | `s` | `no-public-buckets` | mandatory" in text
    assert "| ⚠️ | `s` | `tags-present` | advisory" in text
    assert "| ✅ | `s` | `quota-short`" in text
    assert "**replace** (deploymentType)" in text  # throughput updates in place (tfaws: no ForceNew)
    assert "<details><summary>Property changes" in text
    check_golden("diff.md", text, update_goldens)


def test_json_and_table_carry_the_same_totals(catalog: Catalog) -> None:
    report = sample(catalog)
    assert json.loads(render_diff_json(report))["monthly"]["delta_usd"] == str(report.monthly.delta_usd)
    assert report.exit_code == 1  # a mandatory violation on the head side
    assert "-/+ aws:fsx/lustreFileSystem:LustreFileSystem fs (replace)" in render_diff_table(report)


def test_long_text_changes_show_the_first_differing_line() -> None:
    before = "line one\n" + "x" * 80 + "\nnodes=16\n"
    after = "line one\n" + "x" * 80 + "\nnodes=32\n"
    change = PropertyChangeOut(path="userData", before=before, after=after, effect="update")
    assert pair(change) == ("line 3: nodes=16", "line 3: nodes=32")


def test_a_comment_on_a_thousand_changed_resources_fits_githubs_limit(catalog: Catalog) -> None:
    """GitHub refuses comments over 65,536 characters (the Infracost comment caps itself the same way): the
    comment keeps the totals and every finding, shows as many resource rows as fit, and says what it cut."""
    p = provider()
    head = graph(p, *(res("aws:ec2/natGateway:NatGateway", f"nat-{i:04d}-{'x' * 40}", p) for i in range(1000)))
    finding = ReviewItem("s", "policy", "security-open-ingress", "mandatory", "nat-0001", "open to the world")
    d = diff_sides({}, {"s": Snapshot("s", head, price_graph(head, catalog), (finding,))}, replacements())
    text = render_diff_markdown(diff_report(d, "main", "working tree", catalog))
    assert len(text) <= 65_536
    assert text.startswith(MARKER + "\n## gpuinfra: ❌ 1 blocking; monthly cost +")
    assert "`security-open-ingress`" in text  # findings are never cut
    shown = text.count("\n| + | `")  # created rows: the 1,000 gateways and their provider
    assert 0 < shown < 1001
    assert f"*{1001 - shown} more resource changes in this stack are not shown" in text


def test_a_small_comment_is_not_cut(catalog: Catalog) -> None:
    text = render_diff_markdown(sample(catalog))
    assert "not shown" not in text
