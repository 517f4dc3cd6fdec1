"""A replica's cloud-init: parses, its scripts pass bash -n, weights come from the region's replica."""

from __future__ import annotations

import base64
from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.components.inference.bootstrap import ServerConfig, replica_cloud_init
from gpuinfra.templating import unpacked
from helpers import assert_bash_ok, cloud_config, example_graph, scripts


def test_cloud_init_parses_and_scripts_pass_bash_n(tmp_path: Path) -> None:
    text = replica_cloud_init(
        ServerConfig(
            fleet="chat",
            region="eu-central-1",
            instance_type="g6.xlarge",
            bucket="acme-model-registry-eu-central-1",
            model_prefix="models/",
            weights_prefix="llama/v3/",
            image="vllm/vllm-openai:v0.11.0",
            server_port=8000,
            engine_args=("--model", "/model"),
            max_sequences=4,
            engine=load_catalog().engine("vllm"),
            launch_heartbeat_seconds=461,
            launch_deadline_seconds=783,
        )
    )
    config = cloud_config(text)
    found = scripts(config)
    assert len(found) == 6  # prefetch, serve, lifecycle, drain, queue-metric, gpu-health
    for script in found:
        assert_bash_ok(script, tmp_path)
    prefetch, serve, lifecycle, drain, metric, _ = found
    assert "SOURCE=s3://acme-model-registry-eu-central-1/models/llama/v3/\n" in prefetch
    # The manifest is fetched first and every file checked before .verified exists; the server refuses
    # to start without it (no marker after a partial sync).
    body = prefetch[prefetch.index("set -euo pipefail") :]
    assert body.index("manifest.json") < body.index("aws s3 sync") < body.index("hashlib.sha256")
    assert body.index("hashlib.sha256") < body.index('mv "$cache/.manifest.new" "$cache/.verified"')
    # The weights go through that one verified fetch (adapters, when listed, through the same function).
    assert body.index("fetch_verified() {") < body.index('fetch_verified "$SOURCE" "$CACHE"')
    assert 'test -f "$MODEL_DIR/.verified"' in serve and serve.index(".verified") < serve.index("docker run")
    # Warm-pool instances complete the hook after prefetch; in-service ones only after /health.
    assert lifecycle.index("until gpuinfra-prefetch") < lifecycle.index("Warmed:*) hook complete")
    assert lifecycle.index("/health") < lifecycle.rindex("complete-lifecycle-action")
    assert 'target-lifecycle-state)" = "Terminated"' in drain and "num_requests_(running|waiting)" in drain
    # No 0 while booting: nothing is published before the launch hook completed into service.
    assert metric.index('in-service" ] || exit 0') < metric.index("put-metric-data")
    units = " ".join(str(c) for c in config["runcmd"])
    assert "enable" in units and "gpuinfra-lifecycle.service" in units and "gpuinfra-queue-metric.timer" in units


def test_each_regions_template_reads_its_own_replica() -> None:
    graph = example_graph("chat-serve")
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        region = graph.provider_of(lt).inputs["region"]  # type: ignore[union-attr]
        text = unpacked(base64.b64decode(lt.inputs["userData"]).decode())
        bucket = "acme-model-registry" if region == "us-east-1" else f"acme-model-registry-{region}"
        assert f"s3://{bucket}/models/llama-3.1-8b-instruct-fp8/v3/" in text
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
        assert lt.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
