"""The usage file: its shape, its errors (exit 2, naming the field), and which source of usage wins."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.cost import ResourceUsage, Usage, UsageFile, load_usage_file
from gpuinfra.errors import InputError
from graphs import graph, provider, res
from helpers import gpuinfra

USAGE = """\
version: 1
resource_type_default_usage:
  aws:ec2/natGateway:NatGateway:
    monthly_data_processed_gb: 100
resource_usage:
  nat-b:
    monthly_data_processed_gb: 250
  aws:s3/bucket:Bucket::bucket:
    storage_gb: 1000
"""


def test_usage_file_loads_by_name_by_key_and_by_type(tmp_path: Path) -> None:
    path = tmp_path / "usage.yml"
    path.write_text(USAGE)
    usage = load_usage_file(path)
    p = provider()
    nat_a, nat_b = (res("aws:ec2/natGateway:NatGateway", n, p) for n in ("nat-a", "nat-b"))
    bucket = res("aws:s3/bucket:Bucket", "bucket", p)
    assert usage.value(nat_a, "monthly_data_processed_gb").amount == 100  # type: ignore[union-attr]
    assert usage.value(nat_b, "monthly_data_processed_gb").amount == 250  # type: ignore[union-attr]
    assert usage.value(bucket, "storage_gb").amount == 1000  # type: ignore[union-attr]
    assert usage.source == str(path)


def test_usage_file_beats_the_spec_which_beats_type_defaults() -> None:
    bucket = res("aws:s3/bucket:Bucket", "b", provider())
    assumed = {bucket.key: (ResourceUsage(storage_gb=Decimal(5)), "from the plan")}
    by_type = Usage(UsageFile(resource_type_default_usage={bucket.type: ResourceUsage(storage_gb=Decimal(1))}))
    assert by_type.with_assumed(assumed).value(bucket, "storage_gb").origin == "spec"  # type: ignore[union-attr]
    explicit = Usage(UsageFile(resource_usage={"b": ResourceUsage(storage_gb=Decimal(9))})).with_assumed(assumed)
    assert explicit.value(bucket, "storage_gb").amount == 9  # type: ignore[union-attr]


def test_unknown_usage_field_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "usage.yml"
    path.write_text("version: 1\nresource_usage:\n  x:\n    storage_gbs: 3\n")
    with pytest.raises(InputError) as err:
        load_usage_file(path)
    assert "unknown field 'storage_gbs'" in err.value.render()
    assert "did you mean 'storage_gb'" in err.value.render()


def test_usage_file_error_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "usage.yml"
    path.write_text("version: 2\n")
    done = gpuinfra("cost", "llm-train", "--usage-file", str(path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "version" in done.stderr


def test_priced_usage_line_uses_the_file(tmp_path: Path) -> None:
    from gpuinfra.catalog import load_catalog
    from gpuinfra.cost import price_graph

    path = tmp_path / "usage.yml"
    path.write_text(USAGE)
    p = provider()
    nat = res("aws:ec2/natGateway:NatGateway", "nat-b", p)
    lines = price_graph(graph(p, nat), load_catalog(), load_usage_file(path)).get(nat.key).lines
    processed = next(line for line in lines if line.name == "Data processed")
    rate = load_catalog().service("nat/data_processed")
    assert rate is not None and processed.monthly == 250 * rate.usd


def test_flow_log_group_is_priced_from_the_usage_file_and_unknown_without_it(tmp_path: Path) -> None:
    """CloudWatch Logs: $0.50 per GB ingested, $0.03 per GB-month stored (Infracost's
    cloudwatch_log_group_test.golden: 1,000 GB ingested $500.00, 500 GB stored $15.00)."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.cost import price_graph

    path = tmp_path / "usage.yml"
    path.write_text(
        "version: 1\nresource_usage:\n  net-flow-logs:\n    monthly_ingested_gb: 1000\n    storage_gb: 500\n"
    )
    p = provider()
    group = res("aws:cloudwatch/logGroup:LogGroup", "net-flow-logs", p, retentionInDays=365)
    lines = {
        line.name: line
        for line in price_graph(graph(p, group), load_catalog(), load_usage_file(path)).get(group.key).lines
    }
    assert lines["Data ingested"].monthly == Decimal("500.00")
    assert lines["Storage"].monthly == Decimal("15.00")
    unpriced = {line.name: line for line in price_graph(graph(p, group), load_catalog()).get(group.key).lines}
    assert unpriced["Data ingested"].monthly is None and unpriced["Storage"].monthly is None
