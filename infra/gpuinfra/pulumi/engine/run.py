"""Run a Pulumi program in-process under Pulumi's mocks and record the resource graph.

This is how gpuinfra previews without the Pulumi CLI or provider plugins: the same program `pulumi up`
runs registers its resources with a mock monitor that records every registration (type, name,
inputs, parent, provider, dependencies). It is an engine for preview and tests, never a replacement
for `pulumi up`: nothing here talks to a cloud.

Traps handled (see shared/reference/pulumi-inprocess.md): mocks do no autonaming (filled here with a
stable hash), provider references need ids, runs in one process need a fresh root and event loop,
registration order is nondeterministic (the graph is sorted), numbers arrive as floats.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pulumi
import pulumi.runtime
import pulumi.runtime.resource
import pulumi.runtime.settings
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.proto import source_pb2

from gpuinfra.errors import GpuinfraError
from gpuinfra.graph import STACK_TYPE, Graph, Resource
from gpuinfra.graph.values import plain
from gpuinfra.pulumi.engine.mocks import AwsMocks
from gpuinfra.pulumi.engine.unknowns import acyclic_unknown_checks

_RUN_LOCK = threading.Lock()


class EngineError(GpuinfraError):
    """The program failed while registering resources (its message says why)."""


class _Recorder(pulumi_mocks.MockMonitor):
    """The mock monitor, recording every registration and building URNs the way the engine does."""

    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.records: list[Resource] = []
        self._lock = threading.Lock()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The real engine qualifies a type with its ancestors' types, but not with the root stack's.
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != STACK_TYPE:
                type_ = f"{parent_type}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        inputs = plain(json_format.MessageToDict(request.object)) if request.type != STACK_TYPE else {}
        record = Resource(
            urn=response.urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
            custom=bool(request.custom),
            dependencies=tuple(sorted(set(request.dependencies))),
            inputs=inputs,
            protect=bool(request.protect),
            retain_on_delete=bool(request.retainOnDelete),
            delete_before_replace=bool(request.deleteBeforeReplace),
            ignore_changes=tuple(request.ignoreChanges),
        )
        with self._lock:
            self.records.append(record)
        return response


class _ErrorLog(logging.Handler):
    """Collects what the program logs at error level (pulumi.log.error) so a run can fail on it."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str],
    secret_keys: tuple[str, ...] = (),
) -> Graph:
    """Run `program` as `pulumi preview` would, under mocks; return the sorted resource graph."""
    with _RUN_LOCK:
        mocks = AwsMocks()
        recorder = _Recorder(mocks)
        errors = _ErrorLog()
        logger = logging.getLogger(f"gpuinfra.engine.{stack}")
        logger.propagate = False
        logger.handlers = [errors]
        pulumi.runtime.settings.ROOT.set(None)
        _fresh_event_loop()
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, logger=logger, monitor=recorder)
        pulumi.runtime.set_all_config(dict(config), list(secret_keys))
        loop = asyncio.get_event_loop()
        handler = loop.get_exception_handler()
        loop.set_exception_handler(_quiet)
        try:
            with engine_settings():
                pulumi_mocks.test(program)()
        except GpuinfraError:
            raise
        except Exception as exc:
            # A failed run leaves futures whose exceptions nobody will retrieve. They stay alive as long as the
            # error's traceback does (the caller's report outlives this call), so the failed run's loop keeps the
            # quiet handler for good: its "never retrieved" reports go nowhere whenever the futures are freed,
            # never into the next stack's output. The next run starts on a fresh loop.
            gc.collect()
            raise EngineError(
                f"the Pulumi program failed for stack {stack}{_culprit(exc)}: {type(exc).__name__}: {exc}"
            ) from exc
        loop.set_exception_handler(handler)
        if errors.messages:
            raise EngineError(f"the Pulumi program reported errors for stack {stack}: " + "; ".join(errors.messages))
        return Graph.of(stack, project, recorder.records, mocks.after_apply)


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A run's own unretrieved future exceptions: the run already failed (or will) with the first of them."""


def _culprit(exc: BaseException) -> str:
    """' (in <Type> <name>)' for the innermost Pulumi resource whose code raised, when the traceback shows one."""
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, pulumi.Resource):
            name = getattr(owner, "_name", None)
            found = f" (in {type(owner).__name__} {name})" if name else found
        tb = tb.tb_next
    return found


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a run. A mocked run keeps every resource, output and future
    alive, so each automatic collection walks all of them and their number grows with the graph: measured
    on a 40-region fleet, collections were more than half the run and made it superlinear. Reference
    counting still frees what it can; cycles are collected at the next collection after the run."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_STACK_TRACE = "_get_stack_trace"
"""pulumi.runtime.resource's per-registration stack walk (pulumi 3.272; tests/engine/test_engine.py fails if a
pin move loses it)."""


@contextmanager
def no_source_positions() -> Iterator[None]:
    """Skip the stack walk the SDK does at every registration: `traceback.extract_stack` (with a source-line
    lookup and a stat per file) and a file URI per frame, so that `pulumi preview` can show where in the
    program each resource was made. The recorder reads no such field, so in-process it is pure cost, and it
    grows with the program's call depth (about a tenth of a training preview). The graph is the same."""
    module = pulumi.runtime.resource
    saved = getattr(module, _STACK_TRACE, None)
    if saved is None:
        yield
        return
    setattr(module, _STACK_TRACE, source_pb2.StackTrace)  # an empty trace: no frames, no source position
    try:
        yield
    finally:
        setattr(module, _STACK_TRACE, saved)


@contextmanager
def engine_settings() -> Iterator[None]:
    """How the engine runs a program (bench/floor.py runs its floor the same way, so they compare code)."""
    with gc_paused(), no_source_positions(), acyclic_unknown_checks():
        yield


def _fresh_event_loop() -> None:
    try:
        loop = asyncio.get_event_loop()
        if not loop.is_closed():
            return
    except RuntimeError:
        pass
    asyncio.set_event_loop(asyncio.new_event_loop())


__all__ = ["EngineError", "engine_settings", "gc_paused", "no_source_positions", "run"]
