"""Policy pack config, reconciled like the Pulumi CLI: defaults, then `all`, then each policy's entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.policy.config import load_config_file, parse_config, reconcile
from gpuinfra.policy.pack import PolicyConfig, PolicyMeta, pack_config

METAS = [
    PolicyMeta(
        "alpha",
        "mandatory",
        {
            "limit": {"type": "integer", "minimum": 0, "default": 3},
            "names": {"type": "array", "items": {"type": "string"}, "default": []},
        },
    ),
    PolicyMeta("beta", "advisory"),
]


def test_defaults_come_from_levels_and_schema_defaults() -> None:
    assert reconcile(METAS) == {
        "alpha": PolicyConfig("mandatory", {"limit": 3, "names": []}),
        "beta": PolicyConfig("advisory", {}),
    }


def test_all_sets_every_level_then_entries_override_it() -> None:
    result = reconcile(METAS, given={"all": "advisory", "alpha": {"enforcementLevel": "disabled", "limit": 5}})
    assert result == {
        "alpha": PolicyConfig("disabled", {"limit": 5, "names": []}),
        "beta": PolicyConfig("advisory", {}),
    }


def test_initial_config_is_applied_before_the_users() -> None:
    result = reconcile(METAS, initial={"alpha": {"limit": 7}, "beta": "mandatory"}, given={"alpha": {"names": ["x"]}})
    assert result["alpha"] == PolicyConfig("mandatory", {"limit": 7, "names": ["x"]})
    assert result["beta"].level == "mandatory"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"alpah": "advisory"}, r"names unknown policy 'alpah'\n    hint: did you mean 'alpha'\?"),
        ({"alpha": "strict"}, r"'alpha' has enforcement level 'strict'\n    hint: use one of advisory, mandatory"),
        ({"alpha": {"limit": "three"}}, r"policy alpha: limit: 'three' is not of type integer"),
        ({"alpha": {"limit": -1}}, r"policy alpha: limit: -1 is less than the minimum 0"),
        ({"alpha": {"names": [1]}}, r"policy alpha: names: 1 is not of type string"),
        ({"alpha": {"limt": 1}}, r"policy alpha: unknown property 'limt' \(did you mean 'limit'\?\)"),
        ({"alpha": 3}, r"'alpha' must be an enforcement level or an object, not 3"),
    ],
)
def test_bad_config_is_an_input_error(given: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        reconcile(METAS, given=given)


def test_config_file_in_the_clis_format(tmp_path: Path) -> None:
    path = tmp_path / "policy-config.json"
    path.write_text('{"all": "mandatory", "beta": {"enforcementLevel": "advisory"}}')
    assert parse_config({"all": "mandatory", "beta": {"enforcementLevel": "advisory"}}) == load_config_file(path)
    path.write_text('{"all": "mandatory",\n "beta": }')
    with pytest.raises(InputError, match="the policy config is not JSON") as err:
        load_config_file(path)
    assert err.value.problems[0].line == 2


def test_the_packs_own_config_validates() -> None:
    config = pack_config()
    assert config["separation-network"] == PolicyConfig(
        "mandatory", {"allowed_cidrs": [], "allowed_prefix_lists": [], "allowed_transit_gateways": []}
    )
    assert config["inference-no-training-hardware"].level == "advisory"
    # issue 26: mandatory by default; issue 46: only fees with no citable price may be left unpriced by default:
    # AWS PCS's, Google's Managed Lustre and Filestore capacity (no dated price: #54) and Cluster Director's
    # Slurm controller (no source prices it: #54)
    assert config["budget-within-account"] == PolicyConfig(
        "mandatory",
        {
            "share": 1,
            "accepted_unpriced": [
                "aws-native:pcs:Cluster: PCS controller",
                "aws-native:pcs:ComputeNodeGroup: PCS node management",
                "aws-native:pcs:Queue: Resource",
                "gcp:lustre/instance:Instance: Storage capacity",
                "gcp:filestore/instance:Instance: Storage capacity",
                "gcp:hypercomputecluster/cluster:Cluster: Slurm controller",
            ],
        },
    )
