"""A leaving Kubernetes server pod drains before SIGTERM (review #29): the preStop program runs here against a
fake vLLM /metrics and returns when nothing is in flight, when the server is gone, or at its deadline; the pod's
grace period, the NLB's deregistration delay and its disk requests follow the plan.

vLLM cancels its HTTP server on SIGTERM (vllm/entrypoints/launcher.py serve_http); the kubelet runs preStop
before SIGTERM, within terminationGracePeriodSeconds (Kubernetes docs, "Pod Lifecycle")."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan.inference import plan_inference
from gpuinfra.pulumi.components.inference.pod_drain import drain_command
from helpers import example_graph, inputs_for

# Lines as vLLM's Prometheus endpoint writes them (one series per engine and model).
METRICS = (
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    'vllm:num_requests_running{{engine="0",model_name="llama"}} {running}\n'
    'vllm:num_requests_waiting{{engine="0",model_name="llama"}} {waiting}\n'
    'vllm:num_requests_swapped{{engine="0",model_name="llama"}} 7.0\n'
)


class FakeServer:
    def __init__(self, in_flight: list[tuple[float, float]]) -> None:
        """`in_flight`: (running, waiting) per scrape; the last one repeats."""
        self.in_flight, self.scrapes = in_flight, 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                running, waiting = fake.in_flight[min(fake.scrapes, len(fake.in_flight) - 1)]
                fake.scrapes += 1
                body = METRICS.format(running=running, waiting=waiting).encode()
                self.send_response(200 if self.path == "/metrics" else 404)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    fake = FakeServer(request.param)
    yield fake
    fake.httpd.shutdown()


def run_drain(port: int, limit: int) -> float:
    """Run the preStop command as the kubelet would (its argv), with no settle and a fast poll; seconds taken."""
    command = drain_command(port, limit, load_catalog().engine("vllm"), settle_seconds=0, poll_seconds=0.05)
    assert command[0] == "python3"
    start = time.monotonic()
    subprocess.run([sys.executable, *command[1:]], check=True, timeout=30)
    return time.monotonic() - start


@pytest.mark.parametrize("server", [[(2.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0)]], indirect=True)
def test_it_waits_until_nothing_runs_or_waits(server: FakeServer) -> None:
    run_drain(server.port, limit=20)
    assert server.scrapes == 4  # the swapped series does not count


@pytest.mark.parametrize("server", [[(3.0, 0.0)]], indirect=True)
def test_it_gives_up_at_the_deadline(server: FakeServer) -> None:
    took = run_drain(server.port, limit=1)
    assert 1 <= took < 10 and server.scrapes > 1


def test_a_server_that_is_gone_has_nothing_to_drain() -> None:
    fake = FakeServer([(0.0, 0.0)])
    port = fake.port
    fake.httpd.shutdown()
    fake.httpd.server_close()
    assert run_drain(port, limit=20) < 10


def test_the_pod_waits_for_the_longest_generation() -> None:
    inputs = inputs_for("chat-serve-k8s")
    plan = plan_inference(inputs.spec, inputs.org.org, load_catalog())  # type: ignore[arg-type]
    drains = {rp.region: rp.drain_seconds for rp in plan.regions}
    graph = example_graph("chat-serve-k8s")
    for deployment in graph.of_type("kubernetes:apps/v1:Deployment"):
        region = deployment.name.removeprefix("chat-k8s-").removesuffix("-server")
        pod = deployment.inputs["spec"]["template"]["spec"]
        (server,) = pod["containers"]
        command = server["lifecycle"]["preStop"]["exec"]["command"]
        settle, port, limit = (int(a) for a in command[3:6])
        assert (port, limit) == (8000, drains[region])
        # The hook (settle + drain) and vLLM's exit fit the grace period, or the kubelet kills the stream.
        assert pod["terminationGracePeriodSeconds"] >= settle + limit + 10
        # Weights: 8B parameters in bf16 = 16e9 bytes (2 bytes each), with 10% slack = 16.4 GiB -> 17Gi.
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["weights"]["emptyDir"]["sizeLimit"] == f"{math.ceil(16e9 * 1.1 / 2**30)}Gi" == "17Gi"
        assert server["resources"]["requests"]["ephemeral-storage"] == "28Gi"  # weights 17 + cache 10 + /tmp 1
    for service in graph.of_type("kubernetes:core/v1:Service"):
        region = service.name.removeprefix("chat-k8s-").removesuffix("-service")
        attributes = service.inputs["metadata"]["annotations"][
            "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes"
        ]
        assert attributes == f"deregistration_delay.timeout_seconds={drains[region]}"
