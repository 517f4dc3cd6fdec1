"""Every script a serving replica runs, executed as its systemd unit runs it (default PATH, no HOME, the
unit's StateDirectory) against a fake IMDSv2 and AWS on 127.0.0.1 (node_fakes), with the real AWS CLI;
and shellcheck on every rendered script of the example fleet."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from gpuinfra.pulumi.components.inference.bootstrap import (
    ITL_METRIC,
    LAUNCH_HOOK,
    METRIC_NAME,
    METRIC_NAMESPACE,
    TERMINATE_HOOK,
    TTFT_METRIC,
    ServerConfig,
    render_scripts,
    replica_cloud_init,
)
from helpers import cloud_config, example_graph
from moto.server import ThreadedMotoServer
from node_fakes import BUCKET, ENGINE, IMAGE, REGION, SECRET, AutoScaling, Imds, Node, serving, shellcheck
from node_fakes import server_config as config

WEIGHTS = {"config.json": b'{"model_type": "llama"}', "model-00001.safetensors": bytes(range(256)) * 64}


def units(server: ServerConfig) -> dict[str, str]:
    """Unit files by name, as cloud-init writes them."""
    files = cloud_config(replica_cloud_init(server))["write_files"]
    return {f["path"].rsplit("/", 1)[-1]: f["content"] for f in files if f["path"].startswith("/etc/systemd")}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def aws_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def client(aws_url: str, service: str) -> Any:
    return boto3.client(
        service, region_name=REGION, endpoint_url=aws_url, aws_access_key_id="t", aws_secret_access_key="t"
    )


def upload_weights(aws_url: str, corrupt: bool = False) -> None:
    s3 = client(aws_url, "s3")
    s3.create_bucket(Bucket=BUCKET)
    entries = []
    for name, data in WEIGHTS.items():
        s3.put_object(Bucket=BUCKET, Key=f"models/llama/v3/{name}", Body=data)
        digest = hashlib.sha256(b"x" if corrupt else data).hexdigest()
        entries.append({"path": name, "size": len(data), "sha256": digest})
    s3.put_object(Bucket=BUCKET, Key="models/llama/v3/manifest.json", Body=json.dumps({"files": entries}))


@pytest.fixture
def node(tmp_path: Path, aws_url: str) -> Iterator[tuple[Node, Imds, AutoScaling]]:
    urllib.request.urlopen(urllib.request.Request(f"{aws_url}/moto-api/reset", method="POST")).read()
    imds, autoscaling = Imds(), AutoScaling()
    with serving(imds.handler()) as imds_url, serving(autoscaling.handler()) as as_url:
        fake = Node(tmp_path / "node", imds_url, aws_url, as_url)
        fake.root.mkdir()
        yield fake, imds, autoscaling
        fake.stop_server()


def get(url: str, key: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        return int(urllib.request.urlopen(request, timeout=5).status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except urllib.error.URLError:
        return 0  # nothing listening (yet)


def published(aws_url: str) -> list[float]:
    cw = client(aws_url, "cloudwatch")
    now = time.time()
    stats = cw.get_metric_statistics(
        Namespace=METRIC_NAMESPACE,
        MetricName=METRIC_NAME,
        Dimensions=[{"Name": "Fleet", "Value": "chat"}],
        StartTime=now - 600,
        EndTime=now + 600,
        Period=60,
        Statistics=["Sum"],
    )
    return [p["Sum"] for p in stats["Datapoints"]]


# ---- launch: prefetch, serve, hook ------------------------------------------------------------------------
def test_launch_into_service_serves_with_the_key_and_completes_the_hook(node: Any, aws_url: str) -> None:
    fake, imds, autoscaling = node
    port = free_port()
    server = config(port)
    upload_weights(aws_url)
    client(aws_url, "secretsmanager").create_secret(Name=SECRET, SecretString="k-123")
    fake.install(render_scripts(server))
    result = fake.run("lifecycle", units(server)["gpuinfra-lifecycle.service"])
    assert result.returncode == 0, result.stderr
    cache = fake.state / "weights/llama/v3"
    assert (cache / "model-00001.safetensors").read_bytes() == WEIGHTS["model-00001.safetensors"]
    assert (cache / ".verified").exists() and (fake.state / "in-service").exists()
    # The real CLI signed its calls with the instance role's credentials, fetched over IMDSv2.
    assert "GET /latest/meta-data/iam/security-credentials/replica-role" in imds.requests
    assert autoscaling.of("CompleteLifecycleAction") == [
        {
            "LifecycleHookName": LAUNCH_HOOK,
            "AutoScalingGroupName": imds.group,
            "InstanceId": imds.instance_id,
            "LifecycleActionResult": "CONTINUE",
        }
    ]
    docker = fake.log("docker")
    assert ["pull", "--quiet", IMAGE] in docker
    run = next(args for args in docker if args[0] == "run")
    # The engine's arguments arrive as separate words, quoted ones intact, after the image.
    assert run[run.index(IMAGE) + 1 :] == list(ENGINE)
    assert ["start", "gpuinfra-serve.service"] in fake.log("systemctl")
    # vLLM (here its stand-in) got the key from Secrets Manager through the environment, not argv.
    assert "k-123" not in " ".join(run)
    assert get(f"http://127.0.0.1:{port}/v1/models") == 401
    assert get(f"http://127.0.0.1:{port}/v1/models", "k-123") == 200


def test_launch_into_the_warm_pool_completes_after_prefetch_without_serving(node: Any, aws_url: str) -> None:
    fake, imds, autoscaling = node
    imds.target_state = "Warmed:Stopped"
    server = config(free_port())
    upload_weights(aws_url)
    fake.install(render_scripts(server))
    result = fake.run("lifecycle", units(server)["gpuinfra-lifecycle.service"])
    assert result.returncode == 0, result.stderr
    assert (fake.state / "weights/llama/v3/.verified").exists()
    assert fake.log("systemctl") == [] and not (fake.state / "in-service").exists()
    assert [c["LifecycleActionResult"] for c in autoscaling.of("CompleteLifecycleAction")] == ["CONTINUE"]


def test_a_key_without_a_value_is_waited_for_with_heartbeats(node: Any, aws_url: str) -> None:
    """The first `pulumi up` of a fleet whose key is set later: the server waits, the hook is kept alive."""
    fake, _, autoscaling = node
    port = free_port()
    server = config(port)
    upload_weights(aws_url)
    secrets = client(aws_url, "secretsmanager")
    secrets.create_secret(Name=SECRET)  # no value: GetSecretValue raises ResourceNotFoundException
    fake.install(render_scripts(server))
    env = fake.environment(units(server)["gpuinfra-lifecycle.service"])
    import subprocess

    process = subprocess.Popen([str(fake.sbin / "gpuinfra-lifecycle")], env=env, cwd="/", text=True)
    try:
        time.sleep(4)
        assert process.poll() is None and autoscaling.of("CompleteLifecycleAction") == []
        secrets.put_secret_value(SecretId=SECRET, SecretString="late-key")
        assert process.wait(timeout=120) == 0
    finally:
        process.kill() if process.poll() is None else None
    assert len(autoscaling.of("RecordLifecycleActionHeartbeat")) >= 2
    assert autoscaling.of("CompleteLifecycleAction")[-1]["LifecycleActionResult"] == "CONTINUE"
    assert get(f"http://127.0.0.1:{port}/v1/models", "late-key") == 200


def test_a_release_not_yet_replicated_holds_the_canary(node: Any, aws_url: str) -> None:
    """A new weights_prefix rolls out while S3 replication is still copying it to this region: the shards are
    there, the manifest (written last by the promote script; replication keeps no order: the next test) is not.
    The launch hook holds the canary out of service, with heartbeats, until the manifest arrives; then it fetches,
    verifies and serves."""
    fake, _, autoscaling = node
    port = free_port()
    server = config(port)
    upload_weights(aws_url)
    s3 = client(aws_url, "s3")
    manifest = s3.get_object(Bucket=BUCKET, Key="models/llama/v3/manifest.json")["Body"].read()
    s3.delete_object(Bucket=BUCKET, Key="models/llama/v3/manifest.json")  # not replicated yet
    client(aws_url, "secretsmanager").create_secret(Name=SECRET, SecretString="k")
    fake.install(render_scripts(server))
    env = fake.environment(units(server)["gpuinfra-lifecycle.service"])
    process = subprocess.Popen(
        [str(fake.sbin / "gpuinfra-lifecycle")], env=env, cwd="/", text=True, stderr=subprocess.PIPE
    )
    try:
        time.sleep(8)
        assert process.poll() is None and autoscaling.of("CompleteLifecycleAction") == []
        assert not (fake.state / "weights/llama/v3/model-00001.safetensors").exists()  # nothing fetched
        assert fake.log("systemctl") == []  # the server never started
        assert len(autoscaling.of("RecordLifecycleActionHeartbeat")) >= 1
        s3.put_object(Bucket=BUCKET, Key="models/llama/v3/manifest.json", Body=manifest)  # replication arrives
        assert process.wait(timeout=120) == 0
        stderr = process.stderr.read() if process.stderr else ""
    finally:
        process.kill() if process.poll() is None else None
    assert "models/llama/v3/manifest.json is not in us-east-1 yet (replication): waiting" in stderr
    assert (fake.state / "weights/llama/v3/.verified").exists()
    assert [c["LifecycleActionResult"] for c in autoscaling.of("CompleteLifecycleAction")] == ["CONTINUE"]
    assert get(f"http://127.0.0.1:{port}/v1/models", "k") == 200


def test_a_manifest_replicated_before_a_shard_fetches_nothing_verified_until_the_shard_arrives(
    node: Any, aws_url: str
) -> None:
    """S3 replication copies objects asynchronously and keeps no write order (S3 UG "Replicating objects"), so a
    replica may hold the release's manifest before one of its shards. prefetch then syncs what is there, finds a
    listed file missing, writes no .verified and fails (the launch hook retries it every 15 s); once the shard
    arrives the same prefetch completes."""
    fake, _, _ = node
    server = config(free_port())
    upload_weights(aws_url)
    s3 = client(aws_url, "s3")
    late = next(iter(WEIGHTS))
    s3.delete_object(Bucket=BUCKET, Key=f"models/llama/v3/{late}")  # still replicating
    fake.install(render_scripts(server))
    unit = units(server)["gpuinfra-lifecycle.service"]
    first = fake.run("prefetch", unit)
    assert first.returncode != 0, first.stderr
    assert not (fake.state / "weights/llama/v3/.verified").exists()
    s3.put_object(Bucket=BUCKET, Key=f"models/llama/v3/{late}", Body=WEIGHTS[late])  # the shard arrives
    second = fake.run("prefetch", unit)
    assert second.returncode == 0, second.stderr
    assert (fake.state / "weights/llama/v3/.verified").exists()
    assert (fake.state / f"weights/llama/v3/{late}").read_bytes() == WEIGHTS[late]


def test_the_launch_deadline_covers_replication_time_control() -> None:
    """A canary may wait the 15 minutes RTC allows for its release, then a cold start: a short cold start (200 s)
    still gets 200 + 900 + 300 (margin) = 1,400 s, not 3 x 200 + 300 = 900."""
    from gpuinfra.pulumi.components.inference.replicas import launch_deadline

    assert launch_deadline(200) == 1400
    assert launch_deadline(600) == 3 * 600 + 300  # a long cold start keeps its own margin


SPOT_NOTICE = json.dumps({"action": "terminate", "time": "2026-12-06T02:00:00Z"})


def test_the_spot_notice_detaches_the_instance_once_keeping_the_desired_capacity(node: Any) -> None:
    """EC2's two-minute notice (IMDS spot/instance-action) reaches the drain unit's wait loop (every 5 s):
    DetachInstances without decrementing, so the load balancer stops sending it requests now and the group launches
    the replacement now; once per instance. Without a notice nothing is called."""
    fake, imds, autoscaling = node
    server = config(free_port())
    fake.install(render_scripts(server))
    (fake.state / "in-service").touch()
    env = fake.environment(units(server)["gpuinfra-drain.service"])
    process = subprocess.Popen([str(fake.sbin / "gpuinfra-drain")], env=env, cwd="/", text=True)
    try:
        time.sleep(7)
        assert autoscaling.calls == [] and (fake.state / "in-service").exists()  # no notice yet
        imds.spot_action = SPOT_NOTICE
        deadline = time.time() + 30
        while not autoscaling.of("DetachInstances") and time.time() < deadline:
            time.sleep(1)
        time.sleep(11)  # two more turns of the loop
        assert process.poll() is None  # still waiting (a detached instance gets no terminating hook)
    finally:
        process.kill()
    assert autoscaling.of("DetachInstances") == [
        {
            "InstanceIds.member.1": imds.instance_id,
            "AutoScalingGroupName": imds.group,
            "ShouldDecrementDesiredCapacity": "false",
        }
    ]
    assert not (fake.state / "in-service").exists()  # the metric publisher stops counting it


def test_a_launch_past_its_deadline_abandons_itself(node: Any, aws_url: str) -> None:
    fake, _, autoscaling = node
    server = config(free_port(), launch_deadline_seconds=3)
    upload_weights(aws_url)
    client(aws_url, "secretsmanager").create_secret(Name=SECRET, SecretString="k")
    (fake.root / "unhealthy").touch()  # the server never answers /health
    fake.install(render_scripts(server))
    result = fake.run("lifecycle", units(server)["gpuinfra-lifecycle.service"])
    assert result.returncode == 1
    assert [c["LifecycleActionResult"] for c in autoscaling.of("CompleteLifecycleAction")] == ["ABANDON"]


def test_prefetch_refuses_weights_that_differ_from_the_manifest(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    server = config(free_port())
    upload_weights(aws_url, corrupt=True)
    fake.install(render_scripts(server))
    result = fake.run("prefetch", units(server)["gpuinfra-lifecycle.service"])
    assert result.returncode != 0 and "sha256 differs from the manifest" in result.stderr
    assert not (fake.state / "weights/llama/v3/.verified").exists()


def test_serve_refuses_unverified_weights(node: Any) -> None:
    fake, _, _ = node
    server = config(free_port())
    fake.install(render_scripts(server))
    result = fake.run("serve", units(server)["gpuinfra-serve.service"])
    assert result.returncode == 1 and "weights not verified" in result.stderr
    assert fake.log("docker") == []


# ---- the load metric ----------------------------------------------------------------------------------------
def start_server(fake: Node, port: int, load: tuple[int, int] = (0, 0)) -> None:
    import subprocess
    import sys

    (fake.root / "load").write_text(f"{load[0]} {load[1]}")
    process = subprocess.Popen([sys.executable, str(fake.root / "fake_server.py"), str(port), str(fake.root)])
    (fake.root / "server.pid").write_text(str(process.pid))
    deadline = time.time() + 10
    while get(f"http://127.0.0.1:{port}/health") != 200:
        assert time.time() < deadline
        time.sleep(0.1)


def test_metric_is_silent_before_service_and_counts_requests_in_flight(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    port = free_port()
    server = config(port)
    fake.install(render_scripts(server))
    unit = units(server)["gpuinfra-queue-metric.service"]
    start_server(fake, port, load=(3, 4))
    assert fake.run("queue-metric", unit).returncode == 0
    assert published(aws_url) == []  # launching (no in-service marker): nothing, not a 0
    (fake.state / "in-service").touch()
    result = fake.run("queue-metric", unit)
    assert result.returncode == 0, result.stderr
    assert published(aws_url) == [7.0]  # 3 running + 4 waiting


def test_an_unreachable_server_reports_saturated(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    server = config(free_port())  # nothing listens there
    fake.install(render_scripts(server))
    (fake.state / "in-service").touch()
    started = time.time()
    result = fake.run("queue-metric", units(server)["gpuinfra-queue-metric.service"])
    assert result.returncode == 0, result.stderr
    assert published(aws_url) == [6.0]  # max_sequences: a full replica
    assert time.time() - started < 50  # within the unit's TimeoutStartSec


def statistics(aws_url: str, metric: str, stat: str) -> list[float]:
    """`stat` of `metric` (dimension Fleet=chat) per minute, from moto's CloudWatch."""
    now = time.time()
    points = client(aws_url, "cloudwatch").get_metric_statistics(
        Namespace=METRIC_NAMESPACE,
        MetricName=metric,
        Dimensions=[{"Name": "Fleet", "Value": "chat"}],
        StartTime=now - 600,
        EndTime=now + 600,
        Period=60,
        Statistics=[stat],
    )["Datapoints"]
    return [p[stat] for p in points]


def histograms(ttft: list[tuple[float, int]], itl: tuple[float, int] | None, tpot: tuple[float, int]) -> str:
    """vLLM's histogram samples: TTFT per engine (sum, count), the inter-token histogram (absent: None, as
    before vLLM 0.11), the deprecated time-per-output-token one; a served model name with a space."""
    lines = []
    for engine, (total, count) in enumerate(ttft):
        labels = f'{{engine="{engine}",model_name="llama 8b"}}'
        lines += [
            f'vllm:time_to_first_token_seconds_bucket{{engine="{engine}",le="+Inf",model_name="llama 8b"}} {count}.0',
            f"vllm:time_to_first_token_seconds_count{labels} {count}.0",
            f"vllm:time_to_first_token_seconds_sum{labels} {total}",
            f"vllm:time_to_first_token_seconds_created{labels} 1.7e+09",
        ]
    if itl:
        lines += [
            f'vllm:inter_token_latency_seconds_count{{model_name="llama 8b"}} {itl[1]}.0',
            f'vllm:inter_token_latency_seconds_sum{{model_name="llama 8b"}} {itl[0]}',
        ]
    lines += [
        f'vllm:time_per_output_token_seconds_count{{model_name="llama 8b"}} {tpot[1]}.0',
        f'vllm:time_per_output_token_seconds_sum{{model_name="llama 8b"}} {tpot[0]}',
    ]
    return "\n".join(lines) + "\n"


def test_latency_means_come_from_the_deltas_since_the_last_run(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    port = free_port()
    server = config(port)
    fake.install(render_scripts(server))
    unit = units(server)["gpuinfra-queue-metric.service"]
    start_server(fake, port, load=(1, 0))
    (fake.state / "in-service").touch()

    def run(metrics: str) -> None:
        (fake.root / "metrics").write_text(metrics)
        result = fake.run("queue-metric", unit)
        assert result.returncode == 0, result.stderr

    # First reading: a baseline only. Two engines: 10 s over 4 first tokens; ITL 2 s over 100 gaps.
    run(histograms([(6.0, 3), (4.0, 1)], (2.0, 100), (99.0, 1)))
    assert statistics(aws_url, TTFT_METRIC, "SampleCount") == []
    # A minute later: TTFT (9 + 7) - 10 = 6 s over (5 + 3) - 4 = 4 tokens = 1.5 s; ITL 3 s / 60 = 0.05 s
    # (the deprecated histogram, 1 s over 1 more, is not read while the new one is there).
    run(histograms([(9.0, 5), (7.0, 3)], (5.0, 160), (100.0, 2)))
    assert statistics(aws_url, TTFT_METRIC, "Average") == [1.5]
    assert statistics(aws_url, ITL_METRIC, "Average") == [0.05]
    # No request since: no latency datapoint (not a 0). Then a restarted server (counters lower): none either.
    run(histograms([(9.0, 5), (7.0, 3)], (5.0, 160), (100.0, 2)))
    run(histograms([(0.5, 1)], (0.1, 10), (0.1, 10)))
    assert statistics(aws_url, TTFT_METRIC, "SampleCount") == [1.0]
    assert statistics(aws_url, ITL_METRIC, "SampleCount") == [1.0]
    # The requests in flight still went out on every run, in the same call (1 running, 0 waiting); summed over
    # the minutes, as the runs may straddle a minute boundary.
    assert sum(statistics(aws_url, METRIC_NAME, "SampleCount")) == 4.0
    assert set(statistics(aws_url, METRIC_NAME, "Maximum")) == {1.0}


def test_an_image_before_vllm_0_11_reads_time_per_output_token(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    port = free_port()
    server = config(port)
    fake.install(render_scripts(server))
    unit = units(server)["gpuinfra-queue-metric.service"]
    start_server(fake, port)
    (fake.state / "in-service").touch()
    for tpot in ((2.0, 40), (2.8, 60)):
        (fake.root / "metrics").write_text(histograms([(1.0, 1)], None, tpot))
        assert fake.run("queue-metric", unit).returncode == 0
    assert statistics(aws_url, ITL_METRIC, "Average") == [0.04]  # 0.8 s / 20 gaps


def test_a_model_name_with_a_space_does_not_corrupt_the_load(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    port = free_port()
    server = config(port)
    fake.install(render_scripts(server))
    start_server(fake, port, load=(3, 4))
    (fake.root / "metrics").write_text('vllm:num_requests_running{engine="0",model_name="llama 8b"} 2.0\n')
    (fake.state / "in-service").touch()
    assert fake.run("queue-metric", units(server)["gpuinfra-queue-metric.service"]).returncode == 0
    assert published(aws_url) == [9.0]  # 3 + 4 + 2: the value is the sample's last field, not "8b"}"


def test_the_metric_runs_from_a_minutely_timer_with_a_time_box() -> None:
    found = units(config(8000))
    assert "OnCalendar=*-*-* *:*:00" in found["gpuinfra-queue-metric.timer"]
    service = found["gpuinfra-queue-metric.service"]
    assert "Type=oneshot" in service and "TimeoutStartSec=50" in service


# ---- drain ---------------------------------------------------------------------------------------------------
def test_drain_waits_for_idle_then_stops_and_continues(node: Any, aws_url: str) -> None:
    fake, imds, autoscaling = node
    imds.target_state = "Terminated"
    port = free_port()
    server = config(port)
    fake.install(render_scripts(server))
    start_server(fake, port, load=(0, 0))
    (fake.state / "in-service").touch()
    result = fake.run("drain", units(server)["gpuinfra-drain.service"])
    assert result.returncode == 0, result.stderr
    assert ["stop", "--time", "30", "model-server"] in fake.log("docker")
    assert not (fake.state / "in-service").exists()
    assert autoscaling.of("CompleteLifecycleAction") == [
        {
            "LifecycleHookName": TERMINATE_HOOK,
            "AutoScalingGroupName": imds.group,
            "InstanceId": imds.instance_id,
            "LifecycleActionResult": "CONTINUE",
        }
    ]


# ---- GPU health ----------------------------------------------------------------------------------------------
XID_79 = "NVRM: Xid (PCI:0000:00:1e): 79, pid=1101, name=python3, GPU has fallen off the bus."
XID_13 = "NVRM: Xid (PCI:0000:00:1e): 13, pid=1101, name=python3, Graphics Exception: ESR 0x404600=0x80000002"


def check_gpus(fake: Node, server: ServerConfig) -> subprocess.CompletedProcess[str]:
    result = fake.run("gpu-health", units(server)["gpuinfra-gpu-health.service"], timeout=50)
    assert result.returncode == 0, result.stderr
    return result


def unhealthy_calls(autoscaling: AutoScaling) -> list[dict[str, str]]:
    return autoscaling.of("SetInstanceHealth")


MARKED = {"InstanceId": "i-0123456789abcdef0", "HealthStatus": "Unhealthy", "ShouldRespectGracePeriod": "false"}


def test_healthy_gpus_and_application_xids_leave_the_instance_alone(node: Any) -> None:
    fake, _, autoscaling = node
    server = config(8000, accelerators=2)
    fake.install(render_scripts(server))
    (fake.state / "in-service").touch()
    (fake.root / "gpus").write_text("2")
    (fake.root / "kernel.log").write_text(f"[  1.0] pci 0000:00:1e.0: enabling device\n{XID_13}\n")
    check_gpus(fake, server)
    assert unhealthy_calls(autoscaling) == []


def test_a_fatal_xid_marks_the_instance_unhealthy_once(node: Any) -> None:
    fake, _, autoscaling = node
    server = config(8000)
    fake.install(render_scripts(server))
    (fake.state / "in-service").touch()
    (fake.root / "kernel.log").write_text(f"{XID_13}\n")
    check_gpus(fake, server)
    assert unhealthy_calls(autoscaling) == []
    with (fake.root / "kernel.log").open("a") as log:
        log.write(f"{XID_79}\n")
    result = check_gpus(fake, server)
    assert "fatal Xid 79" in result.stderr
    assert unhealthy_calls(autoscaling) == [MARKED]
    # The Xid is old news on the next check (the cursor moved past it): no second call.
    check_gpus(fake, server)
    assert len(unhealthy_calls(autoscaling)) == 1


@pytest.mark.parametrize("fault", ["driver-fails", "gpu-missing"])
def test_a_failing_or_short_nvidia_smi_marks_the_instance_unhealthy(fault: str, node: Any) -> None:
    fake, _, autoscaling = node
    server = config(8000, accelerators=4)
    fake.install(render_scripts(server))
    (fake.state / "in-service").touch()
    if fault == "driver-fails":
        (fake.root / "nvidia-smi-fails").touch()
    else:
        (fake.root / "gpus").write_text("3")
    result = check_gpus(fake, server)
    assert ("nvidia-smi failed" if fault == "driver-fails" else "nvidia-smi lists 3 of 4 GPU(s)") in result.stderr
    assert unhealthy_calls(autoscaling) == [MARKED]


def test_a_replica_not_in_service_is_not_judged(node: Any) -> None:
    fake, _, autoscaling = node
    server = config(8000)
    fake.install(render_scripts(server))
    (fake.root / "kernel.log").write_text(f"{XID_79}\n")
    check_gpus(fake, server)
    assert unhealthy_calls(autoscaling) == []


def test_the_gpu_check_runs_from_a_minutely_timer_on_nvidia_only() -> None:
    found = units(config(8000))
    assert "OnCalendar=*-*-* *:*:30" in found["gpuinfra-gpu-health.timer"]
    service = found["gpuinfra-gpu-health.service"]
    assert "Type=oneshot" in service and "TimeoutStartSec=50" in service
    enabled = cloud_config(replica_cloud_init(config(8000)))["runcmd"][1]
    assert "gpuinfra-gpu-health.timer" in enabled
    neuron = config(8000, server_kind="neuron")
    assert "gpu-health" not in render_scripts(neuron)
    assert "gpuinfra-gpu-health.timer" not in units(neuron)


# ---- shellcheck ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["api-key", "no-auth", "ecr"])
def test_shellcheck_passes_on_every_script(variant: str, tmp_path: Path) -> None:
    overrides: dict[str, Any] = {
        "api-key": {},
        "no-auth": {"api_key_secret": None},
        "ecr": {"image_registry": "222222222222.dkr.ecr.us-east-1.amazonaws.com"},
    }[variant]
    for name, body in render_scripts(config(8000, **overrides)).items():
        result = shellcheck(body, tmp_path)
        assert result.returncode == 0, f"{name}:\n{result.stdout}"


def test_shellcheck_passes_on_the_example_fleets_scripts(tmp_path: Path) -> None:
    graph = example_graph("chat-serve")
    templates = graph.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert templates
    for lt in templates:
        files = cloud_config(base64.b64decode(lt.inputs["userData"]).decode())["write_files"]
        bodies = [f["content"] for f in files if f["path"].startswith("/usr/local/sbin/")]
        assert len(bodies) == 6  # SCRIPTS and the GPU check
        for body in bodies:
            result = shellcheck(body, tmp_path)
            assert result.returncode == 0, result.stdout


def test_prefetch_logs_in_to_ecr_and_pulls_the_cached_digest(node: Any, aws_url: str) -> None:
    fake, _, _ = node
    host = "222222222222.dkr.ecr.us-east-1.amazonaws.com"
    image = f"{host}/docker-hub/vllm/vllm-openai:v0.11.0"
    digest = "sha256:" + "ab" * 32
    server = config(free_port(), image=image, image_registry=host, image_digest=digest)
    upload_weights(aws_url)
    fake.install(render_scripts(server))
    result = fake.run("prefetch", units(server)["gpuinfra-lifecycle.service"])
    assert result.returncode == 0, result.stderr
    login = json.loads((fake.root / "login").read_text())
    # The password is the one `aws ecr get-login-password` got from (moto's) ECR, fed on stdin.
    assert login["args"] == ["login", "--username", "AWS", "--password-stdin", host] and login["password"].strip()
    assert ["pull", "--quiet", f"{host}/docker-hub/vllm/vllm-openai@{digest}"] in fake.log("docker")
