"""A leaving server pod finishes what it is generating before it gets SIGTERM.

vLLM's HTTP server cancels itself on SIGTERM (vllm/entrypoints/launcher.py `serve_http`: the SIGTERM handler
calls `server_task.cancel()`), so a stream still running is cut. The kubelet runs the container's preStop hook
before it sends SIGTERM, and the hook may take the whole termination grace period (Kubernetes docs, "Pod
Lifecycle: Termination of Pods"; "Container hooks"). The hook waits for the load balancer to stop sending new
requests, then until vLLM reports no running or waiting request, at most the longest generation the planner
expects (`RegionPlan.drain_seconds`, the EC2 fleet's deregistration delay and drain hook too)."""

from __future__ import annotations

from gpuinfra.catalog.engines import Engine

SETTLE_SECONDS = 30
"""Time for the load balancer to stop sending new requests before the drain starts counting."""
EXIT_MARGIN_SECONDS = 30
"""Left of the grace period after the hook for vLLM to exit on SIGTERM."""

DRAIN_PROGRAM = """\
import re, sys, time, urllib.request
settle, port, limit = (int(a) for a in sys.argv[1:4])
poll = float(sys.argv[4])
path, names = sys.argv[5], "|".join(re.escape(n) for n in sys.argv[6:8])
time.sleep(settle)
deadline = time.monotonic() + limit
busy = re.compile(r"^(?:" + names + r")(?:\\{[^}]*\\})? ([0-9.eE+-]+)$", re.M)
while time.monotonic() < deadline:
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).read().decode()
    except OSError:
        break
    if sum(float(v) for v in busy.findall(text)) == 0:
        break
    time.sleep(poll)
"""
"""Python's standard library only (every engine's image has python3; curl is not promised). The metrics path needs
no key: vLLM's --api-key guards /v1 only. An unreachable server has nothing left to drain. Arguments: settle, port,
drain limit, poll, then the engine's metrics path and its running and waiting series (catalog engines.yaml)."""


POLL_SECONDS = 5


def drain_command(
    port: int,
    drain_seconds: int,
    engine: Engine,
    settle_seconds: int = SETTLE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> list[str]:
    """The preStop exec command: values are arguments, never spliced into the program."""
    timing = [str(settle_seconds), str(port), str(drain_seconds), f"{poll_seconds:g}"]
    series = [engine.running_metric, engine.waiting_metric]
    return ["python3", "-c", DRAIN_PROGRAM, *timing, engine.metrics_path, *series]


def grace_seconds(drain_seconds: int, settle_seconds: int = SETTLE_SECONDS) -> int:
    """terminationGracePeriodSeconds: the settle, the longest drain and the exit."""
    return settle_seconds + drain_seconds + EXIT_MARGIN_SECONDS


__all__ = ["DRAIN_PROGRAM", "EXIT_MARGIN_SECONDS", "POLL_SECONDS", "SETTLE_SECONDS", "drain_command", "grace_seconds"]
