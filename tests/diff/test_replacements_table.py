"""The replacement table is generated from the providers' own definitions (tools/replacements_build.py) at the
pinned versions: the pins are the installed ones, a dozen marks match the provider source, the generator reads
terraform's schema shape right, and the marks turn into the verdicts a reviewer reads."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.review.replacements import load_table
from gpuinfra.review.diff import Snapshot, diff_sides
from gpuinfra.review.effects import REPLACE, UPDATE, replacements
from helpers import graph_for

ROOT = Path(__file__).resolve().parents[2]
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("replacements_build", ROOT / "tools" / "replacements_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["replacements_build"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("pin", "dist"),
    [("pulumi-aws", "pulumi_aws"), ("pulumi-aws-native", "pulumi_aws_native"), ("cfn-lint", "cfn-lint")],
)
def test_the_table_was_generated_at_the_installed_pins(pin: str, dist: str) -> None:
    """Upgrading a provider (or cfn-lint) without rerunning tools/replacements_build.py fails here."""
    assert load_table()["pins"][pin] == importlib.metadata.version(dist), (
        f"{pin} moved: rerun `python tools/replacements_build.py --tfaws <checkout> --tfaws-ref <tag>`"
    )


def test_the_table_is_awss_own_catalog_and_the_tool_writes_it_there() -> None:
    """Every rule is of an aws or aws-native type: the file is AWS's (clouds/aws/catalog/data/), which the tool
    regenerates in place, and the shared catalog no longer holds it."""
    from gpuinfra.clouds.aws.catalog import DATA_DIR

    assert DATA_DIR == ROOT / "infra" / "gpuinfra" / "clouds" / "aws" / "catalog" / "data"
    assert _tool().TABLE == DATA_DIR / "replacements.yaml" and (DATA_DIR / "replacements.yaml").is_file()
    assert not (ROOT / "infra" / "gpuinfra" / "catalog" / "data" / "replacements.yaml").exists()
    assert {t.split(":")[0] for r in load_table()["rules"] for t in r["types"]} == {"aws", "aws-native"}


# terraform-provider-aws internal/service/fsx/lustre_file_system.go (aws-sdk-go-v2 version, with
# metadata_configuration; the version recorded in the table's pins): expected marks typed in from the file.
LUSTRE_SOURCE = [
    ("deploymentType", "replace", 106),  # "deployment_type": { ... ForceNew: true (line 106)
    ("storageType", "replace", 283),  # names.AttrStorageType: { ... ForceNew: true
    ("subnetIds", "replace", 290),  # names.AttrSubnetIDs: { Required, ForceNew: true
    ("securityGroupIds", "replace", 266),  # names.AttrSecurityGroupIDs: { ForceNew: true
    ("kmsKeyId", "replace", 161),  # names.AttrKMSKeyID: { ForceNew: true
    ("backupId", "replace", 80),
    ("copyTagsToBackups", "replace", 85),
    ("importPath", "replace", 144),
    ("fileSystemTypeVersion", "replace", 132),
    ("storageCapacity", "replace_if_decreased", 325),  # d.ForceNew("storage_capacity") under n.(int) < o.(int)
    ("perUnitStorageThroughput", None, 0),  # line 226: Type, Optional, ValidateFunc; no ForceNew
    ("automaticBackupRetentionDays", None, 0),  # line 71: no ForceNew (updated in place)
    ("dataCompressionType", None, 0),  # line 97: no ForceNew
]


def test_a_dozen_lustre_marks_match_the_provider_source() -> None:
    (row,) = [r for r in load_table()["rules"] if LUSTRE in r["types"] and r["source"] == "tfaws-pinned"]
    assert row["file"] == "internal/service/fsx/lustre_file_system.go"
    for prop, kind, line in LUSTRE_SOURCE:
        if kind is None:
            assert prop not in row["replace"] and prop not in row.get("replace_if_decreased", []), prop
        else:
            assert prop in row[kind], prop
            assert row["lines"][prop] == line, prop


def test_pcs_marks_are_the_cloudformation_create_only_properties() -> None:
    """cfn-lint 1.58.0 schemas: AWS::PCS::Cluster createOnlyProperties /properties/Name, /Networking, /Size;
    ComputeNodeGroup /Name, /ClusterId, /InstanceConfigs; Queue /Name, /ClusterId."""
    rows = {t: r for r in load_table()["rules"] for t in r["types"]}
    assert set(rows["aws-native:pcs:Cluster"]["replace"]) == {"name", "networking", "size"}
    assert set(rows["aws-native:pcs:ComputeNodeGroup"]["replace"]) == {"name", "clusterId", "instanceConfigs"}
    assert set(rows["aws-native:pcs:Queue"]["replace"]) == {"name", "clusterId"}


def test_the_native_rows_are_what_the_generator_reads_from_the_installed_schemas() -> None:
    tool = _tool()
    rows = {t: r for r in load_table()["rules"] for t in r["types"]}
    for token in tool.NATIVE:
        assert set(rows[token]["replace"]) == set(tool.native_rule(token).replace), token


SYNTHETIC = """package x

// @SDKResource("aws_widget", name="Widget")
func resourceWidget() *schema.Resource {
	return &schema.Resource{
		Schema: map[string]*schema.Schema{
			"size": {
				Type:     schema.TypeInt,
				Optional: true,
			},
			names.AttrKMSKeyID: {
				Type:     schema.TypeString,
				ForceNew: true,
			},
			"config": {
				Type:     schema.TypeList,
				MaxItems: 1,
				Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						"mode": {
							Type:     schema.TypeString,
							ForceNew: true,
						},
						"level": {
							Type: schema.TypeString,
						},
					},
				},
			},
			"label": {
				Type: schema.TypeString,
			},
		},
	}
}

func widgetCustomizeDiff(_ context.Context, d *schema.ResourceDiff, meta any) error {
	if d.HasChange("size") {
		o, n := d.GetChange("size")
		if n.(int) < o.(int) {
			if err := d.ForceNew("size"); err != nil {
				return err
			}
		}
	}
	return nil
}
"""


def test_the_generator_reads_top_level_nested_and_decreasing_force_new(tmp_path: Path) -> None:
    """A schema written here in terraform-plugin-sdk's shape: line numbers counted by hand."""
    tool = _tool()
    go = tmp_path / "internal" / "service" / "widget" / "widget.go"
    go.parent.mkdir(parents=True)
    go.write_text(SYNTHETIC)
    lines = SYNTHETIC.splitlines()
    assert dict(tool.force_new(lines, {})) == {"kms_key_id": 13, "config.mode": 22}
    assert dict(tool.forced_if_decreased(lines, {})) == {"size": 41}
    tool.TERRAFORM["aws:x/widget:Widget"] = "aws_widget"
    try:
        rule = tool.tfaws_rule("aws:x/widget:Widget", tmp_path, {})
    finally:
        del tool.TERRAFORM["aws:x/widget:Widget"]
    assert rule.replace == {"kmsKeyId": 13, "config.mode": 22} and rule.replace_if_decreased == {"size": 41}


def _diff(base, head, catalog: Catalog):  # type: ignore[no-untyped-def]
    return diff_sides(
        {base.stack: Snapshot(base.stack, base)}, {head.stack: Snapshot(head.stack, head)}, replacements()
    )


def _resource(d, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in d.stacks[0].resources if r.name == name)


def test_raising_lustre_throughput_from_250_to_500_is_an_update(catalog: Catalog) -> None:
    """The example's PERSISTENT_2 file system at 250 MB/s/TiB raised to 500: UpdateFileSystem changes it in place."""
    base = graph_for("llm-train", {"lustre.throughput_mb_s_per_tib": 250})
    head = graph_for("llm-train", {"lustre.throughput_mb_s_per_tib": 500})
    fs = _resource(_diff(base, head, catalog), "llm-train-storage-lustre")
    assert fs.action == "update"
    assert [(c.path, c.before, c.after, c.effect) for c in fs.changes] == [
        ("perUnitStorageThroughput", 250, 500, UPDATE)
    ]


def test_a_create_only_pcs_property_replaces_the_cluster(catalog: Catalog) -> None:
    """Changing the PCS cluster's networking (create-only) replaces it."""
    base = graph_for("llm-train")
    head_graph = graph_for("llm-train")
    from dataclasses import replace as dc_replace

    cluster = next(r for r in head_graph.resources if r.type == "aws-native:pcs:Cluster")
    networking = {**cluster.inputs.get("networking", {}), "securityGroupIds": ["sg-0123456789abcdef0"]}
    moved = dc_replace(cluster, inputs={**cluster.inputs, "networking": networking})
    head = type(head_graph).of(
        head_graph.stack, head_graph.project, (moved if r is cluster else r for r in head_graph.resources)
    )
    r = _resource(_diff(base, head, catalog), cluster.name)
    assert r.action == "replace" and {c.effect for c in r.changes} == {REPLACE}


def _changed(graph, type_: str, path: str, value):  # type: ignore[no-untyped-def]
    """`graph` with one input of its (first) resource of `type_` set to `value` (a dotted path)."""
    from dataclasses import replace as dc_replace

    target = next(r for r in graph.resources if r.type == type_)
    inputs = dict(target.inputs)
    head, _, tail = path.partition(".")
    inputs[head] = {**inputs.get(head, {}), tail: value} if tail else value
    # the derived names are ignore_changes (they only move with a create-only value); the table's own mark is tested
    moved = dc_replace(target, inputs=inputs, ignore_changes=())
    return type(graph).of(graph.stack, graph.project, (moved if r is target else r for r in graph.resources)), target


CREATE_ONLY = [
    # cfn-lint 1.58.0 AWS::PCS::Cluster createOnlyProperties: /Name, /Networking, /Size
    ("aws-native:pcs:Cluster", "name", "llm-train-2"),
    ("aws-native:pcs:Cluster", "networking.subnetIds", ["subnet-0fedcba9876543210"]),
    ("aws-native:pcs:Cluster", "size", "MEDIUM"),
    # AWS::PCS::ComputeNodeGroup: /Name, /ClusterId, /InstanceConfigs
    ("aws-native:pcs:ComputeNodeGroup", "name", "llm-train-od-2"),
    ("aws-native:pcs:ComputeNodeGroup", "clusterId", "pcs_0123456789"),
    ("aws-native:pcs:ComputeNodeGroup", "instanceConfigs", [{"instanceType": "p5e.48xlarge"}]),
    # AWS::PCS::Queue: /Name, /ClusterId
    ("aws-native:pcs:Queue", "name", "train2"),
    ("aws-native:pcs:Queue", "clusterId", "pcs_0123456789"),
    # FSx: EfaEnabled is in CreateFileSystemLustreConfiguration, not in UpdateFileSystemLustreConfiguration (botocore)
    (LUSTRE, "efaEnabled", False),
]


@pytest.mark.parametrize(
    ("type_", "path", "value"), CREATE_ONLY, ids=[f"{t.split(':')[-1]}.{p}" for t, p, _ in CREATE_ONLY]
)
def test_each_create_only_property_shows_a_replacement(catalog: Catalog, type_: str, path: str, value: object) -> None:
    base = graph_for("llm-train")
    head, target = _changed(graph_for("llm-train"), type_, path, value)
    r = _resource(_diff(base, head, catalog), target.name)
    assert r.action == "replace", (r.action, [(c.path, c.effect) for c in r.changes])
    assert REPLACE in {c.effect for c in r.changes}


def test_every_create_only_property_of_the_pcs_schemas_has_a_case_above() -> None:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    cases = {(t, p.split(".")[0]) for t, p, _ in CREATE_ONLY}
    for type_ in ("Cluster", "ComputeNodeGroup", "Queue"):
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", f"AWS::PCS::{type_}").schema
        for pointer in schema["createOnlyProperties"]:
            prop = pointer.removeprefix("/properties/")
            assert (f"aws-native:pcs:{type_}", prop[:1].lower() + prop[1:]) in cases, (type_, prop)


def test_efa_enabled_comes_from_the_api_s_create_only_members() -> None:
    """The generator's botocore row: EfaEnabled is created and never updated (FSx API), so a change replaces."""
    tool = _tool()
    assert "efaEnabled" in tool.api_create_only(LUSTRE)
    rows = [r for r in load_table()["rules"] if LUSTRE in r["types"]]
    assert {r["source"] for r in rows} == {"tfaws-pinned", "botocore-create-only"}
    (api,) = [r for r in rows if r["source"] == "botocore-create-only"]
    assert api["replace"] == ["efaEnabled"]


def test_day2_changes_to_pcs_give_new_names_and_replace_only_what_they_must(catalog: Catalog) -> None:
    """The review's T4 cases, end to end through the program: p5 -> p5en replaces the node groups (deleted first, a
    new derived name), not the cluster; 16 -> 40 nodes crosses SMALL -> MEDIUM and replaces the cluster under a new
    name (created first: its state does not survive, so the old one runs until the new one exists)."""
    base = graph_for("llm-train")
    groups = {r.name: r for r in base.of_type("aws-native:pcs:ComputeNodeGroup")}
    assert all(g.delete_before_replace and g.ignore_changes == ("name",) for g in groups.values())
    (cluster,) = base.of_type("aws-native:pcs:Cluster")
    assert not cluster.delete_before_replace and cluster.ignore_changes == ("name",)

    bigger = graph_for("llm-train", {"compute.instance_type": "p5en.48xlarge"})
    d = _diff(base, bigger, catalog)
    od = _resource(d, "llm-train-slurm-pcs-od")
    assert od.action == "replace"
    assert [c.path for c in od.changes if c.effect == REPLACE] == ["instanceConfigs[0].instanceType"]
    new_od = next(r for r in bigger.of_type("aws-native:pcs:ComputeNodeGroup") if r.name == od.name)
    assert new_od.inputs["name"] != groups[od.name].inputs["name"]  # no name collision with the old group
    assert "llm-train-slurm-pcs-cluster" not in {r.name for r in d.stacks[0].resources if r.action == "replace"}

    from helpers import ample_quotas

    larger = graph_for("llm-train", {"compute.node_count": 40}, ample_quotas())
    (grown,) = larger.of_type("aws-native:pcs:Cluster")
    assert (cluster.inputs["size"], grown.inputs["size"]) == ("SMALL", "MEDIUM")  # PCS: SMALL holds up to 32
    assert grown.inputs["name"] != cluster.inputs["name"]
    assert _resource(_diff(base, larger, catalog), cluster.name).action == "replace"
