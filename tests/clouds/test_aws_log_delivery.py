"""Whom ELB delivers ALB access logs as (clouds/aws/catalog/data/log_delivery.yaml): AWS's own catalog, reached by the
shared readers (the access-log bucket's policy, the pack's grant rule) through the registry's `log_delivery` part.
Accounts are typed in from the ELB user guide's table as terraform-provider-aws copies it (elbAccountIdPerRegionMap:
ap-northeast-1 582318560864, ap-south-1 718504428378, us-east-1 127311923021), never read back from the file; a
cloud that registers no log-delivery part lets no log bucket's cross-account grant through."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from gpuinfra.catalog import CatalogError, load_catalog
from gpuinfra.catalog.catalog import Catalog
from gpuinfra.clouds import CLOUDS, cloud
from gpuinfra.clouds.aws.catalog.log_delivery import DATA_FILE, elb_log_accounts, read_accounts
from gpuinfra.graph.log_delivery import elb_log_account, log_delivery
from gpuinfra.policy.pack import pack_config, police
from helpers import ROOT, example_graph
from policy_helpers import facts_for

BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
GRANT_RULE = "separation-cross-account-grants"
HEADER = 'elb_log_accounts:\n  source: {source}\n  as_of: {as_of}\n  accounts:\n    us-east-1: "{account}"\n'


def test_the_table_is_awss_registry_part_and_lives_in_its_package() -> None:
    table = elb_log_accounts()
    assert cloud("aws").part("log_delivery")() is table
    assert DATA_FILE.parent == ROOT / "infra" / "gpuinfra" / "clouds" / "aws" / "catalog" / "data"
    assert not (ROOT / "infra" / "gpuinfra" / "catalog" / "data" / "log_delivery.yaml").exists()
    assert (table.source, table.as_of) == ("elb-access-log-accounts", None)  # the ELB guide gives no date
    assert "elb_log_accounts" not in {f.name for f in dataclasses.fields(Catalog)}  # no longer a shared fact


def test_the_accounts_are_the_elb_guides() -> None:
    assert elb_log_account("ap-northeast-1") == "582318560864"
    assert elb_log_account("ap-south-1") == "718504428378"
    assert elb_log_account("us-east-1") == "127311923021"
    assert elb_log_account("ap-southeast-5") is None  # opened since August 2022: the service principal delivers


def test_google_registers_no_log_delivery_and_a_type_no_cloud_owns_has_none() -> None:
    """Google's load balancers log to Cloud Logging in their own project (the backend service's log_config): no
    bucket grant to judge, so no part; a Kubernetes object belongs to no cloud."""
    assert cloud("gcp").parts.log_delivery is None and cloud("onprem").parts.log_delivery is None
    assert log_delivery("gcp:storage/bucket:Bucket") is None
    assert log_delivery("kubernetes:core/v1:Service") is None
    assert log_delivery(BUCKET_POLICY) is elb_log_accounts()


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"source": "no-such-source", "as_of": "null", "account": "127311923021"}, "entries cite unknown sources"),
        ({"source": "elb-access-log-accounts", "as_of": "2026-12-06", "account": "127311923021"}, "as_of 2026-12-06"),
        ({"source": "elb-access-log-accounts", "as_of": "null", "account": "12731192302"}, "12731192302"),
    ],
)
def test_the_reader_refuses_a_table_its_source_does_not_back(tmp_path: Path, fields: dict[str, str], says: str) -> None:
    """An unknown source, a date the (undated) source does not give, an account id that is not twelve digits."""
    planted = tmp_path / "log_delivery.yaml"
    planted.write_text(HEADER.format(**fields), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"log_delivery\.yaml") as raised:
        read_accounts(planted)
    assert says in str(raised.value)


def test_the_shared_catalog_loads_without_the_file() -> None:
    """The shared loader no longer reads it: its entries are AWS's to check (the shared check passes without)."""
    from gpuinfra.catalog.load import consistency_problems, entries

    catalog = load_catalog()
    assert list(consistency_problems(catalog)) == []
    assert all(e.source != "elb-access-log-accounts" for e in entries(catalog))


def test_a_cloud_without_log_delivery_lets_no_log_bucket_grant_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam fails closed: with AWS's part unregistered, chat-serve's access-log buckets' grants to ELB's account
    (us-east-1's 127311923021, eu-central-1's 054676820928) are ordinary cross-account grants, refused; and the
    component that writes those policies refuses to guess a principal."""
    graph, facts = example_graph("chat-serve"), facts_for("chat-serve")  # built with the part, before it goes
    allowed = [v for v in police(graph, facts, pack_config()).violations if v.rule == GRANT_RULE]
    assert allowed == []
    bare = dataclasses.replace(CLOUDS["aws"], parts=dataclasses.replace(CLOUDS["aws"].parts, log_delivery=None))
    monkeypatch.setitem(CLOUDS, "aws", bare)
    refused = [v.message for v in police(graph, facts, pack_config()).violations if v.rule == GRANT_RULE]
    assert any("127311923021" in m for m in refused) and any("054676820928" in m for m in refused), refused
    assert all("ElbAccessLogs" in m for m in refused), refused
    with pytest.raises(LookupError, match="log_delivery"):
        elb_log_account("us-east-1")
