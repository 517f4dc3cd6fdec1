"""A replica's cloud-init: parses, its scripts pass bash -n, weights come from the region's replica."""

from __future__ import annotations

import base64
from pathlib import Path

from helpers import assert_bash_ok, cloud_config, example_graph, scripts

from infra.pulumi.components.inference.bootstrap import ServerConfig, replica_cloud_init


def test_cloud_init_parses_and_scripts_pass_bash_n(tmp_path: Path) -> None:
    text = replica_cloud_init(
        ServerConfig(
            "chat",
            "eu-central-1",
            "g6.xlarge",
            "acme-model-registry-eu-central-1",
            "models/",
            "llama/v3/",
            "vllm/vllm-openai:v0.11.0",
            "llama",
            8000,
            8192,
            4,
            0.9,
            1,
        )
    )
    config = cloud_config(text)
    found = scripts(config)
    assert len(found) == 2
    for script in found:
        assert_bash_ok(script, tmp_path)
    serve = found[0]
    assert 'SOURCE="s3://acme-model-registry-eu-central-1/models/llama/v3/"' in serve
    assert serve.index("aws s3 sync") < serve.index("docker run")  # weights before the server


def test_each_regions_template_reads_its_own_replica() -> None:
    graph = example_graph("chat-serve")
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        region = graph.provider_of(lt).inputs["region"]  # type: ignore[union-attr]
        text = base64.b64decode(lt.inputs["userData"]).decode()
        bucket = "acme-model-registry" if region == "us-east-1" else f"acme-model-registry-{region}"
        assert f"s3://{bucket}/models/llama-3.1-8b-instruct/v3/" in text
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
        assert lt.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
