"""The server image comes from ECR in the fleet's account and region (a pull-through cache of its registry),
pinned by digest; replicas may pull (and, on first pull, import) only under the cache's prefix."""

from __future__ import annotations

import base64
import json

import pytest
from gpuinfra.pulumi.components.inference.images import cached_image, split_image
from helpers import cloud_config, graph_for

DIGEST = "sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c"


@pytest.mark.parametrize(
    ("image", "host", "path"),
    [
        ("vllm/vllm-openai:v0.11.0", "docker.io", "vllm/vllm-openai:v0.11.0"),
        ("nginx:1.27", "docker.io", "library/nginx:1.27"),  # Docker Hub's official images live in library/
        ("public.ecr.aws/neuron/vllm:0.9", "public.ecr.aws", "neuron/vllm:0.9"),
        ("ghcr.io/org/server:v1", "ghcr.io", "org/server:v1"),
        ("localhost:5000/x:1", "localhost:5000", "x:1"),
    ],
)
def test_split_image(image: str, host: str, path: str) -> None:
    assert split_image(image) == (host, path)


def test_an_uncacheable_registry_is_pulled_directly() -> None:
    assert cached_image("222222222222", "us-east-1", "registry.example.com/x:1") is None


def test_every_region_pulls_the_digest_from_its_own_ecr() -> None:
    """image_source ecr_pull_through (the default is ecr_mirror: tests/components/test_image_mirror.py)."""
    graph = graph_for("chat-serve", {"image_source": "ecr_pull_through"})
    rules = {
        graph.provider_of(r).inputs["region"]: r
        for r in graph.of_type("aws:ecr/pullThroughCacheRule:PullThroughCacheRule")
    }  # type: ignore[union-attr]
    assert len(rules) == 4
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        region = graph.provider_of(lt).inputs["region"]  # type: ignore[union-attr]
        rule = rules[region].inputs
        assert rule["upstreamRegistryUrl"] == "registry-1.docker.io" and rule["ecrRepositoryPrefix"] == "docker-hub"
        assert rule["credentialArn"]  # Docker Hub needs credentials for a pull-through cache
        files = cloud_config(base64.b64decode(lt.inputs["userData"]).decode())["write_files"]
        prefetch = next(f["content"] for f in files if f["path"] == "/usr/local/sbin/gpuinfra-prefetch")
        host = f"222222222222.dkr.ecr.{region}.amazonaws.com"
        assert f"docker login --username AWS --password-stdin {host}" in prefetch
        assert f"docker pull --quiet {host}/docker-hub/vllm/vllm-openai@{DIGEST}" in prefetch
        assert "docker.io" not in prefetch and "vllm/vllm-openai:v0.11.0" not in prefetch.split("set -euo")[1]
    secrets = [s.inputs["name"] for s in graph.of_type("aws:secretsmanager/secret:Secret")]
    assert secrets.count("ecr-pullthroughcache/chat-serve-docker-hub") == 4  # the prefix ECR requires


def test_replicas_may_pull_only_under_the_cache_prefix() -> None:
    graph = graph_for("chat-serve", {"image_source": "ecr_pull_through"})
    policies = [p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("-replicas-access")]
    assert len(policies) == 4
    for policy in policies:
        statements = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}
        pull = statements["ImagePull"]
        assert len(pull["Resource"]) == 1 and pull["Resource"][0].endswith(":repository/docker-hub/*")
        assert {"ecr:BatchGetImage", "ecr:BatchImportUpstreamImage"} <= set(pull["Action"])
        assert statements["ImageLogin"]["Action"] == ["ecr:GetAuthorizationToken"]


def test_direct_pulls_are_a_choice() -> None:
    graph = graph_for("chat-serve", {"image_source": "direct"})
    assert not graph.of_type("aws:ecr/pullThroughCacheRule:PullThroughCacheRule")
