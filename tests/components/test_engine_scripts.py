"""A replica's scripts for each serving engine, run as their systemd units run them (node_fakes): the launch hands
the engine's own argv to its image, TensorRT-LLM gets its options file, and the load metric and the drain read the
engine's own series at its own metrics path, served by a stand-in that speaks only that engine's names; shellcheck
on every script of every engine."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from components.test_inference_scripts import (
    aws_url,
    free_port,
    get,
    node,
    published,
    start_server,
    statistics,
    units,
)
from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.pulumi.components.inference.bootstrap import ITL_METRIC, TTFT_METRIC, render_scripts
from gpuinfra.pulumi.components.inference.engine import TRTLLM_CONFIG, engine_args, engine_config
from gpuinfra.spec.inference import ServedModel
from node_fakes import Node, shellcheck
from node_fakes import server_config as config
from ruamel.yaml import YAML

__all__ = ["aws_url", "node"]  # the fixtures, shared with the vLLM script tests

ENGINES = load_catalog().engine_table.engines
VLLM, SGLANG, TENSORRT_LLM = (load_catalog().engine(n) for n in ("vllm", "sglang", "tensorrt-llm"))

MODEL = ServedModel(
    name="llama 8b",
    parameters_billion=8,
    precision="fp8",
    context_length_tokens=8192,
    kv_cache={"layers": 32, "kv_heads": 8, "head_dim": 128},
    max_concurrent_sequences=6,
    weights_prefix="llama/v3/",
)

ENGINE_SERVER = r'''
"""A stand-in for one engine's server: /health, and its metrics at its own path only, with its own series names
(names from <node>/engine.json and load from <node>/load as "running waiting", both read at every request;
histograms verbatim from <node>/metrics)."""
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, node = int(sys.argv[1]), sys.argv[2]
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        engine = json.load(open(os.path.join(node, "engine.json")))
        if self.path == "/health":
            code, body = 200, ""
        elif self.path == engine["path"]:
            running, waiting = open(os.path.join(node, "load")).read().split()
            body = ('# HELP {0} requests\n{0}{{model_name="llama 8b"}} {1}\n'
                    '{2}{{model_name="llama 8b"}} {3}\n').format(engine["running"], running, engine["waiting"], waiting)
            extra = os.path.join(node, "metrics")
            body += open(extra).read() if os.path.exists(extra) else ""
            code = 200
        else:
            code, body = 404, ""
        data = body.encode()
        self.send_response(code); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
'''


def engine_server(fake: Node, engine: Engine, load: tuple[int, int]) -> None:
    """Replace the vLLM stand-in with one that speaks only `engine`'s metric names at its path (start_server starts
    it)."""
    (fake.root / "fake_server.py").write_text(ENGINE_SERVER)
    names = {"path": engine.metrics_path, "running": engine.running_metric, "waiting": engine.waiting_metric}
    (fake.root / "engine.json").write_text(json.dumps(names))
    (fake.root / "load").write_text(f"{load[0]} {load[1]}")


def engine_config_of(engine: Engine, port: int, **overrides: Any) -> Any:
    """The replica's scripts for `engine`, from the same functions the fleet builds them with."""
    return config(
        port,
        engine=engine,
        engine_args=tuple(engine_args(MODEL, "/model", 1, engine)),
        engine_config=engine_config(MODEL, engine.name),
        image=engine.image,
        api_key_secret=None,
        **overrides,
    )


@pytest.mark.parametrize("engine", list(ENGINES), ids=lambda e: e.name)
def test_every_script_of_every_engine_passes_shellcheck(engine: Engine, tmp_path: Path) -> None:
    for name, script in render_scripts(engine_config_of(engine, 8000)).items():
        result = shellcheck(script, tmp_path)
        assert result.returncode == 0, f"{engine.name} {name}: {result.stdout}"


@pytest.mark.parametrize("engine", [SGLANG, TENSORRT_LLM], ids=lambda e: e.name)
def test_the_launch_runs_the_engines_own_command_on_its_image(engine: Engine, node: Any) -> None:
    fake, _, _ = node
    server = engine_config_of(engine, free_port())
    fake.install(render_scripts(server))
    engine_server(fake, engine, (0, 0))
    weights = fake.state / "weights/llama/v3"
    weights.mkdir(parents=True)
    (weights / ".verified").touch()
    env = fake.environment(units(server)["gpuinfra-serve.service"])
    process = subprocess.Popen([str(fake.sbin / "gpuinfra-serve")], env=env, cwd="/", text=True)
    deadline = time.time() + 20
    while get(f"http://127.0.0.1:{server.server_port}/health") != 200:
        assert time.time() < deadline and process.poll() is None
        time.sleep(0.1)
    run = next(args for args in fake.log("docker") if args[0] == "run")
    image_at = run.index(engine.image)
    assert run[image_at + 1 :] == list(server.engine_args)  # the engine's argv, word for word, after its image
    assert run[image_at + 1 : image_at + 1 + len(engine.launcher)] == list(engine.launcher)
    mounts = [run[i + 1] for i, word in enumerate(run) if word == "-v"]
    if engine is TENSORRT_LLM:
        written = fake.state / "engine-config.yaml"
        assert f"{written}:{TRTLLM_CONFIG}:ro" in mounts
        options = YAML(typ="safe").load(written.read_text())
        # tensorrt_llm/metrics/collector.py: the queue gauges come from iteration stats on /prometheus/metrics
        assert options["return_perf_metrics"] is True and options["enable_iter_perf_stats"] is True
        assert options["kv_cache_config"] == {"free_gpu_memory_fraction": 0.9, "dtype": "fp8"}
        assert run[run.index("--config") + 1] == TRTLLM_CONFIG
    else:
        assert not (fake.state / "engine-config.yaml").exists()
        assert all(":/model:ro" in m or m.endswith("/model:ro") for m in mounts)
    fake.stop_server()
    process.terminate()
    process.wait(timeout=10)


def in_service(fake: Node, engine: Engine, load: tuple[int, int], **overrides: Any) -> Any:
    """A replica in service running `engine`'s stand-in: its scripts installed, its server answering."""
    port = free_port()
    server = engine_config_of(engine, port, **overrides)
    fake.install(render_scripts(server))
    engine_server(fake, engine, load)
    start_server(fake, port, load)
    (fake.state / "in-service").touch()
    return server


@pytest.mark.parametrize("engine", list(ENGINES), ids=lambda e: e.name)
def test_the_load_metric_reads_the_engines_own_series(engine: Engine, node: Any, aws_url: str) -> None:
    fake, _, _ = node
    server = in_service(fake, engine, (3, 5))
    result = fake.run("queue-metric", units(server)["gpuinfra-queue-metric.service"])
    assert result.returncode == 0, result.stderr
    assert published(aws_url) == [8.0]  # 3 running + 5 waiting, by the engine's names at its path


@pytest.mark.parametrize("engine", [SGLANG, TENSORRT_LLM], ids=lambda e: e.name)
def test_latency_means_come_from_the_engines_histograms(engine: Engine, node: Any, aws_url: str) -> None:
    fake, _, _ = node
    server = in_service(fake, engine, (1, 0))
    itl = engine.itl_histograms[0]

    def run(ttft: tuple[float, int], gaps: tuple[float, int]) -> None:
        (fake.root / "metrics").write_text(
            f'{engine.ttft_histogram}_sum{{model_name="llama 8b"}} {ttft[0]}\n'
            f'{engine.ttft_histogram}_count{{model_name="llama 8b"}} {ttft[1]}.0\n'
            f'{itl}_sum{{model_name="llama 8b"}} {gaps[0]}\n{itl}_count{{model_name="llama 8b"}} {gaps[1]}.0\n'
        )
        assert fake.run("queue-metric", units(server)["gpuinfra-queue-metric.service"]).returncode == 0

    run((2.0, 4), (1.0, 50))
    run((5.0, 10), (2.5, 80))
    assert statistics(aws_url, TTFT_METRIC, "Average") == [0.5]  # 3 s over 6 first tokens
    assert statistics(aws_url, ITL_METRIC, "Average") == [0.05]  # 1.5 s over 30 gaps


@pytest.mark.parametrize("engine", [SGLANG, TENSORRT_LLM], ids=lambda e: e.name)
def test_the_drain_waits_for_the_engines_requests(engine: Engine, node: Any) -> None:
    """The drain polls the engine's own series: busy (1 running) it waits; idle it stops the server and goes on."""
    fake, imds, autoscaling = node
    server = in_service(fake, engine, (1, 0), drain_seconds=30)
    imds.target_state = "Terminated"
    env = fake.environment(units(server)["gpuinfra-drain.service"])
    process = subprocess.Popen([str(fake.sbin / "gpuinfra-drain")], env=env, cwd="/", text=True)
    time.sleep(6)
    assert process.poll() is None and autoscaling.of("CompleteLifecycleAction") == []  # still busy
    (fake.root / "load").write_text("0 0")
    assert process.wait(timeout=20) == 0
    assert ["stop", "--time", "30", "model-server"] in fake.log("docker")
    assert len(autoscaling.of("CompleteLifecycleAction")) == 1


def test_metrics_without_the_queue_series_read_as_a_full_replica(node: Any, aws_url: str) -> None:
    """trtllm-serve without its iteration stats serves /prometheus/metrics with no queue gauge: the load is unknown,
    and the replica reports its max_sequences rather than a 0 that would hold the fleet at its floor."""
    fake, _, _ = node
    server = in_service(fake, TENSORRT_LLM, (2, 2))
    bare = json.loads((fake.root / "engine.json").read_text()) | {"running": "other_a", "waiting": "other_b"}
    (fake.root / "engine.json").write_text(json.dumps(bare))  # read per request: the gauges vanish now
    result = fake.run("queue-metric", units(server)["gpuinfra-queue-metric.service"])
    assert result.returncode == 0, result.stderr
    assert published(aws_url) == [6.0] and "no trtllm_num_requests_waiting" in result.stderr
