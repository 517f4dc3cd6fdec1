"""The serving network's subnet plan: computed by address arithmetic for speed, so it is checked here
against the plain `ipaddress` construction it replaced, and for the properties AWS needs."""

from __future__ import annotations

import ipaddress
import itertools

from gpuinfra.pulumi.components.inference.network import subnet_cidrs
from hypothesis import given
from hypothesis import strategies as st


def by_subnets(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """The readable (slow) construction: the first /20s and the last /24s of the VPC."""
    vpc = ipaddress.ip_network(vpc_cidr)
    private = list(itertools.islice(vpc.subnets(new_prefix=20), zones))
    public = list(vpc.subnets(new_prefix=24))[-zones:]
    return [str(n) for n in private], [str(n) for n in public]


vpcs = st.integers(0, 255).map(lambda octet: f"10.{octet}.0.0/16")


@given(vpc=vpcs, zones=st.integers(2, 6))
def test_same_plan_as_ipaddress_subnets(vpc: str, zones: int) -> None:
    assert subnet_cidrs(vpc, zones) == by_subnets(vpc, zones)


@given(vpc=vpcs, zones=st.integers(2, 6))
def test_subnets_inside_the_vpc_and_disjoint(vpc: str, zones: int) -> None:
    private, public = subnet_cidrs(vpc, zones)
    nets = [ipaddress.ip_network(c) for c in private + public]
    network = ipaddress.ip_network(vpc)
    assert len(nets) == 2 * zones
    assert all(n.subnet_of(network) for n in nets)  # type: ignore[arg-type]
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))


def test_known_plan() -> None:
    assert subnet_cidrs("10.64.0.0/16", 2) == (
        ["10.64.0.0/20", "10.64.16.0/20"],
        ["10.64.254.0/24", "10.64.255.0/24"],
    )
