"""Network placement rules."""

from __future__ import annotations

import copy

import pytest
from helpers import Case, example_data, run_case

REGIONS = example_data("chat-serve")["config"]["gpuinfra:inference"]["regions"]

CASES = [
    Case(
        "duplicate-region",
        "chat-serve",
        {"regions": [*REGIONS, copy.deepcopy(REGIONS[0])]},
        message=r"region us-east-1 is listed twice \(also at regions\[0\]\)",
    ),
    Case("duplicate-region", "chat-serve", fires=False),
    Case(
        "single-zone-region",
        "chat-serve",
        {"regions[0].availability_zones": ["us-east-1a"]},
        message="region us-east-1 uses 1 zone",
    ),
    Case("single-zone-region", "chat-serve", fires=False),
    # chat-serve's regions default to 10.64, 10.65, 10.66 and 10.67.0.0/16 by order: eu-central-1 (third) set to
    # 10.65.0.0/16 collides with us-west-2's default
    Case(
        "overlapping-region-vpcs",
        "chat-serve",
        {"regions[2].vpc_cidr": "10.65.0.0/16"},
        message=r"^eu-central-1's VPC 10\.65\.0\.0/16 overlaps us-west-2's \(10\.65\.0\.0/16\)",
    ),
    # an internal fleet's client network on ap-northeast-1's default 10.67.0.0/16
    Case(
        "vpc-overlaps-client-network",
        "chat-serve",
        {"access": {"scheme": "internal", "client_cidrs": ["10.67.0.0/16"]}},
        message=r"^ap-northeast-1's VPC 10\.67\.0\.0/16 overlaps the client network 10\.67\.0\.0/16",
    ),
    Case("overlapping-region-vpcs", "chat-serve", fires=False),
    # the former default, one network in every region: us-west-2 (the second) overlaps us-east-1
    Case(
        "overlapping-region-vpcs",
        "chat-serve",
        {f"regions[{i}].vpc_cidr": "10.64.0.0/16" for i in range(4)},
        message=r"^us-west-2's VPC 10\.64\.0\.0/16 overlaps us-east-1's",
    ),
    Case("vpc-overlaps-client-network", "chat-serve", fires=False),
    Case(
        "vpc-overlaps-client-network",
        "chat-serve",
        {"access": {"scheme": "internal", "client_cidrs": ["10.68.0.0/16"]}, "regions[2].vpc_cidr": "10.80.0.0/16"},
        fires=False,
    ),
]


def test_default_vpcs_are_distinct_by_region_order() -> None:
    """10.(64+i).0.0/16 for the i-th region; a region's own vpc_cidr wins and shifts no other."""
    from gpuinfra.spec import InferenceSpec
    from helpers import checked

    spec = checked("chat-serve", {"regions[1].vpc_cidr": "10.90.0.0/16"}).inputs.spec
    assert isinstance(spec, InferenceSpec)
    assert [spec.vpc_cidr_of(i) for i in range(4)] == ["10.64.0.0/16", "10.90.0.0/16", "10.66.0.0/16", "10.67.0.0/16"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
