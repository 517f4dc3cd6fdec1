"""The engine's unknown-value check (engine/unknowns.py): the SDK's answers, without the SDK's garbage cycles."""

from __future__ import annotations

import contextlib
import gc
import importlib
import types
from typing import Any

import pulumi.output
import pulumi.runtime.rpc as rpc
from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.engine.unknowns import acyclic_unknown_checks, contains_unknowns
from gpuinfra.pulumi.preview import preview_graph
from helpers import check, inputs_for
from hypothesis import given
from hypothesis import strategies as st

SDK_CHECK = rpc.contains_unknowns  # the SDK's own, as imported (the engine restores it after each run)

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.just(pulumi.output.UNKNOWN), st.just(())
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20,
)


@given(values)
def test_the_check_answers_as_the_sdks(value: Any) -> None:
    assert contains_unknowns(value) is SDK_CHECK(value)


def test_shared_and_cyclic_values_answer_as_the_sdks() -> None:
    shared: list[Any] = [1]
    looped: list[Any] = [2]
    looped.append(looped)
    unknown_after_loop: dict[str, Any] = {"a": looped}
    unknown_after_loop["b"] = [unknown_after_loop, pulumi.output.UNKNOWN]
    for value in ([shared, shared], looped, {"x": looped}, unknown_after_loop, [(pulumi.output.UNKNOWN,)]):
        assert contains_unknowns(value) is SDK_CHECK(value)
    assert contains_unknowns(unknown_after_loop) is True  # the case that reaches an unknown past a visited node


def test_the_sdk_still_builds_a_closure_per_call_and_routes_through_rpc() -> None:
    # Why the replacement exists, checked at the pin: when pulumi stops defining `impl` inside the check, the
    # replacement is dead weight (remove it); when pulumi.output stops calling the rpc module's, it misses calls.
    inner = [c.co_name for c in SDK_CHECK.__code__.co_consts if isinstance(c, types.CodeType)]
    assert inner == ["impl"], "pulumi's contains_unknowns changed: recheck gpuinfra/pulumi/engine/unknowns.py"
    assert "rpc" in pulumi.output.contains_unknowns.__code__.co_names
    with acyclic_unknown_checks():
        assert rpc.contains_unknowns is contains_unknowns
        assert pulumi.output.contains_unknowns([pulumi.output.UNKNOWN]) is True
    assert rpc.contains_unknowns is SDK_CHECK


def _garbage_of(run: Any) -> tuple[Any, list[str]]:
    """What `run()` returns and the qualified names of the functions it leaves for the cyclic collector."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = run()
        gc.collect()
        names = [f.__qualname__ for f in gc.garbage if isinstance(f, types.FunctionType)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return result, names


def test_a_run_leaves_no_cycle_per_check_and_the_same_graph() -> None:
    engine_run = importlib.import_module("gpuinfra.pulumi.engine.run")  # the module (the package exports run())
    inputs = inputs_for("llm-train")
    plan = check(inputs, load_catalog()).plan
    graph, left = _garbage_of(lambda: preview_graph(inputs, plan))
    saved = engine_run.acyclic_unknown_checks
    engine_run.acyclic_unknown_checks = contextlib.nullcontext  # type: ignore[assignment]
    try:
        sdk_graph, sdk_left = _garbage_of(lambda: preview_graph(inputs, plan))
    finally:
        engine_run.acyclic_unknown_checks = saved
    closures = "contains_unknowns.<locals>.impl"
    assert left.count(closures) == 0
    assert sdk_left.count(closures) > len(sdk_graph.resources)  # several checks per resource without it
    assert graph == sdk_graph
