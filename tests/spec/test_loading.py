"""Loading stack and organization files: the examples load, and every kind of bad input gets a
message naming the file, the line, the field path and what to change."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.errors import InputError
from gpuinfra.load import load_inputs
from gpuinfra.spec import InferenceSpec, RegistrySpec, TrainingSpec, read_stack
from helpers import STACKS, write_stack


@pytest.mark.parametrize(
    ("stack", "model"),
    [("llm-train", TrainingSpec), ("chat-serve", InferenceSpec), ("model-registry", RegistrySpec)],
)
def test_examples_load(stack: str, model: type) -> None:
    inputs = load_inputs(stack)
    assert isinstance(inputs.spec, model)
    assert inputs.stack.name == stack
    assert inputs.account.purpose == inputs.workload


def refused(path: Path | str, read: Callable[[Any], object] = load_inputs) -> list[str]:
    """The rendered problems of an input that must be refused."""
    with pytest.raises(InputError) as exc:
        read(path)
    return [p.render() for p in exc.value.problems]


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", text="config:\n  gpuinfra:training:\n    name: x\n   bad: [\n")
    (message,) = refused(path)
    assert message.startswith(f"{path}:4: YAML syntax error")


def test_unknown_field_suggests_the_right_one(tmp_path: Path) -> None:
    text = (STACKS / "Pulumi.llm-train.yaml").read_text().replace("    interconnect:", "    interconect:")
    path = write_stack(tmp_path, "llm-train", text=text)
    rendered = "\n".join(refused(path))
    assert "config.gpuinfra:training.interconect: unknown field 'interconect'" in rendered
    assert "did you mean 'interconnect'?" in rendered
    line = text.splitlines().index("    interconect:") + 1
    assert f":{line}: config.gpuinfra:training.interconect" in rendered


def test_wrong_type_names_field_path_and_value(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"compute.node_count": "sixteen"})
    (message,) = refused(path)
    assert "config.gpuinfra:training.compute.node_count: Input should be a valid integer" in message
    assert 'got "sixteen"' in message


def test_literal_typo_gets_close_match(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"compute.capacity.type": "spto"})
    messages = refused(path)
    assert "did you mean 'spot'?" in "\n".join(messages)


def test_nested_list_path_is_reported(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "chat-serve", spec={"regions[2].max_replicas": -1})
    messages = refused(path)
    assert (
        "config.gpuinfra:inference.regions[2].max_replicas: Input should be greater than or equal to 1" in messages[0]
    )


def test_all_problems_reported_at_once(tmp_path: Path) -> None:
    path = write_stack(
        tmp_path, "llm-train", spec={"compute.node_count": "x", "lustre.mount_path": 9, "name": "Bad Name"}
    )
    messages = refused(path)
    assert len(messages) == 3


def test_unknown_instance_type_lists_close_matches(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"compute.instance_type": "p5.48xlarg"})
    (message,) = refused(path)
    assert "compute.instance_type: unknown instance type 'p5.48xlarg'" in message
    assert "did you mean 'p5.48xlarge'" in message


def test_unknown_region(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "chat-serve", spec={"regions[0].region": "us-east-9"})
    messages = refused(path)
    assert "regions[0].region: unknown region 'us-east-9'" in messages[0]


def test_missing_account(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"account": "ml-trainin"})
    (message,) = refused(path)
    assert "account 'ml-trainin' is not in the organization file" in message
    assert "did you mean 'ml-training'?" in message


def test_missing_org_file(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train")
    (tmp_path / "org.yaml").unlink()
    messages = refused(path)
    assert messages == [
        f"{tmp_path / 'org.yaml'}: organization file not found\n    hint: check the path (and the link, if it is one)"
    ]


def test_missing_stack_file_suggests_names() -> None:
    messages = refused("llm-trian")
    assert "stack file not found" in messages[0]
    assert "did you mean 'llm-train'" in messages[0]


def test_exactly_one_workload_key(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", text="config:\n  aws:region: us-east-1\n")
    messages = refused(path, read_stack)
    assert (
        "a stack holds exactly one of gpuinfra:training, gpuinfra:inference, gpuinfra:registry, gpuinfra:finetune, "
        "gpuinfra:dataprep; found none" in messages[0]
    )


def test_misspelled_workload_key(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", text="config:\n  gpuinfra:trainig: {}\n")
    messages = refused(path, read_stack)
    assert "did you mean 'training'?" in messages[0]


def test_model_rule_message_is_actionable(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"lustre.throughput_mb_s_per_tib": 200})
    messages = refused(path)
    assert "PERSISTENT_2 needs throughput_mb_s_per_tib in {125, 250, 500, 1000}" in messages[0]


def test_org_role_must_live_in_its_account(tmp_path: Path) -> None:
    path = write_stack(tmp_path, "llm-train", org={"accounts.ml-training.role_arn": "arn:aws:iam::999999999999:role/x"})
    messages = refused(path)
    assert "role_arn is in account 999999999999 but id is 111111111111" in messages[0]


def test_racks_in_an_aws_spec_are_refused_at_their_path(tmp_path: Path) -> None:
    """On EC2 the customer has no racks: `racks` in an AWS spec is a schema error (exit 2) naming file, line, path."""
    path = write_stack(tmp_path, "llm-train", spec={"racks": {"power_budget_kw": 44, "cooling": "direct_liquid"}})
    (message,) = refused(path)
    assert "config.gpuinfra:training.racks: racks are for provider onprem" in message
    assert f"{path.name}:" in message


@pytest.mark.parametrize(
    ("users", "expected"),
    [
        # the same UID twice would give two names one owner on every node's files
        ([{"name": "ana", "uid": 20001}, {"name": "bo", "uid": 20001}], "users: uid 20001 given more than once"),
        ([{"name": "ana", "uid": 20001}, {"name": "ana", "uid": 20002}], "users: name ana given more than once"),
        (
            [{"name": "ana", "uid": 59000}],
            "scheduler.users[0].uid: Input should be less than or equal to 58999, got 59000",
        ),
        # a key is one authorized_keys line: no shell syntax reaches the boot script
        (
            [{"name": "ana", "uid": 20001, "ssh_public_key": "ssh-ed25519 AAAA $(reboot)"}],
            'scheduler.users[0].ssh_public_key: "ssh-ed25519 AAAA $(reboot)" does not have the expected form',
        ),
        ([{"name": f"u{i}", "uid": 20000 + i} for i in range(17)], "List should have at most 16 items"),
    ],
)
def test_cluster_users_are_refused_with_the_field(tmp_path: Path, users: list[dict[str, Any]], expected: str) -> None:
    path = write_stack(tmp_path, "llm-train", spec={"scheduler.users": users})
    rendered = "\n".join(refused(path))
    assert expected in rendered, rendered
    assert str(path) in rendered
