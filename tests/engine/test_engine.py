"""The embedded engine: URNs like the real engine's, values made plain, deterministic graphs,
failures as EngineError."""

from __future__ import annotations

import contextlib
import importlib

import pulumi
import pulumi_aws as aws
import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import SECRET
from gpuinfra.graph.values import plain
from gpuinfra.pulumi.engine import EngineError, run
from gpuinfra.pulumi.preview import preview_graph
from gpuinfra.workspace.program import program_graph
from helpers import EXAMPLES, check, example_graph, inputs_for


def test_plain_values() -> None:
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
    ref = {"4dabf18193072939515e22adb298388d": "5cf8f73096256a8f31e491e813e4eb8e", "urn": "urn:x"}
    assert plain({"a": 2.0, "b": 2.5, "c": [secret, ref], "d": True}) == {
        "a": 2,
        "b": 2.5,
        "c": [SECRET, "urn:x"],
        "d": True,
    }


def test_urns_follow_the_engine_not_the_mock() -> None:
    graph = example_graph("llm-train")
    provider = next(p for p in graph.providers() if p.type == "pulumi:providers:aws")
    assert provider.urn == "urn:pulumi:llm-train::gpuinfra::pulumi:providers:aws::aws-ml-training-us-east-1"
    vpc = graph.one("aws:ec2/vpc:Vpc")
    assert vpc.urn == (
        "urn:pulumi:llm-train::gpuinfra::gpuinfra:training:Cluster$gpuinfra:training:Network"
        "$aws:ec2/vpc:Vpc::llm-train-net-vpc"
    )


def test_two_runs_give_the_same_graph() -> None:
    inputs = inputs_for("llm-train")
    plan = check(inputs, load_catalog()).plan
    assert preview_graph(inputs, plan) == preview_graph(inputs, plan)


@pytest.mark.parametrize("stack", EXAMPLES)
def test_preview_builds_what_the_program_builds_from_its_config(stack: str) -> None:
    """Preview skips the program's own load() (the caller checked the stack already); the program under
    `pulumi up` reads everything from config. Both must register the same graph."""
    inputs = inputs_for(stack)
    assert preview_graph(inputs, check(inputs, load_catalog()).plan) == program_graph(inputs)


def test_a_failing_program_is_an_engine_error() -> None:
    def program() -> None:
        raise ValueError("bad program")

    with pytest.raises(EngineError, match="ValueError: bad program"):
        run(program, project="p", stack="s", config={})


def test_logged_errors_fail_the_run() -> None:
    def program() -> None:
        pulumi.log.error("quota exceeded")

    with pytest.raises(EngineError, match="quota exceeded"):
        run(program, project="p", stack="s", config={})


def test_secrets_are_blinded_in_the_graph() -> None:
    def program() -> None:
        provider = aws.Provider("p", region="us-east-1")
        aws.ssm.Parameter(
            "param",
            type="SecureString",
            value=pulumi.Output.secret("hunter2"),
            opts=pulumi.ResourceOptions(provider=provider),
        )

    graph = run(program, project="p", stack="s", config={})
    assert graph.one("aws:ssm/parameter:Parameter").inputs["value"] == SECRET


def test_program_refuses_error_findings() -> None:
    with pytest.raises(EngineError, match="spot-without-checkpointing"):
        # llm-train's gang back on spot (before the review's finding T15), without checkpointing
        spot = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}
        program_graph(inputs_for("llm-train", {"checkpointing": None, **spot}))


def test_skipping_source_positions_changes_no_graph() -> None:
    # The engine skips the SDK's per-registration stack walk (engine/run.py no_source_positions). The walk must
    # still exist at the pinned pulumi (or the skip silently does nothing), and the graph with it must be the
    # graph without it.
    import pulumi.runtime.resource as sdk

    engine_run = importlib.import_module("gpuinfra.pulumi.engine.run")  # the module (the package exports run())

    assert callable(getattr(sdk, "_get_stack_trace", None)), "pulumi moved its stack walk: update no_source_positions"
    walked: list[int] = []
    original = sdk._get_stack_trace

    def counting() -> object:
        walked.append(1)
        return original()

    inputs = inputs_for("llm-train")
    plan = check(inputs, load_catalog()).plan
    sdk._get_stack_trace = counting
    try:
        skipped = preview_graph(inputs, plan)
        # Only the root stack, which set_mocks registers before the program runs, is walked; restored after.
        assert len(walked) == 1 and sdk._get_stack_trace is counting
        walked.clear()
        with_positions = engine_run.no_source_positions
        engine_run.no_source_positions = contextlib.nullcontext  # type: ignore[assignment]
        try:
            walked_graph = preview_graph(inputs, plan)
        finally:
            engine_run.no_source_positions = with_positions
    finally:
        sdk._get_stack_trace = original
    assert len(walked) == len(skipped.resources) and walked_graph == skipped  # one walk per registration
