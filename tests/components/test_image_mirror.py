"""image_source ecr_mirror: the fleet's own repositories, pulled by digest with no stored registry credential, and
the mirror script that fills them, run as an operator runs it (bash, the real AWS CLI against moto's ECR for the
registry login, crane stood in by a script that records its calls and answers digests)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.inference.mirror import mirror_script
from helpers import example_graph, graph_for, inputs_for
from moto.server import ThreadedMotoServer
from node_fakes import AWS_CLI, SYSTEMD_PATH, shellcheck

DIGEST = "sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c"
ACCOUNT = "222222222222"
REGIONS = ["us-east-1", "us-west-2"]


def test_every_region_pulls_the_digest_from_the_fleet_s_own_repository() -> None:
    """chat-serve (EC2): a repository per region, immutable tags, scanned on push; no pull-through rule and no
    registry credential secret; replicas may only read it (no CreateRepository, no BatchImportUpstreamImage)."""
    import base64

    from helpers import cloud_config

    graph = example_graph("chat-serve")
    assert not graph.of_type("aws:ecr/pullThroughCacheRule:PullThroughCacheRule")
    assert not [s for s in graph.of_type("aws:secretsmanager/secret:Secret") if "pullthroughcache" in s.inputs["name"]]
    repositories = {
        graph.provider_of(r).inputs["region"]: r.inputs for r in graph.of_type("aws:ecr/repository:Repository")
    }  # type: ignore[union-attr]
    assert set(repositories) == {"us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"}
    for repo in repositories.values():
        assert repo["name"] == "chat-serve/vllm-openai" and repo["imageTagMutability"] == "IMMUTABLE"
        assert repo["imageScanningConfiguration"] == {"scanOnPush": True}
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        region = graph.provider_of(lt).inputs["region"]  # type: ignore[union-attr]
        files = cloud_config(base64.b64decode(lt.inputs["userData"]).decode())["write_files"]
        prefetch = next(f["content"] for f in files if f["path"] == "/usr/local/sbin/gpuinfra-prefetch")
        host = f"{ACCOUNT}.dkr.ecr.{region}.amazonaws.com"
        assert f"docker pull --quiet {host}/chat-serve/vllm-openai@{DIGEST}" in prefetch
    for policy in (p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("-replicas-access")):
        pull = {s["Sid"]: s for s in json.loads(policy.inputs["policy"])["Statement"]}["ImagePull"]
        assert pull["Resource"][0].endswith(":repository/chat-serve/*")
        assert not {"ecr:CreateRepository", "ecr:BatchImportUpstreamImage"} & set(pull["Action"])


def test_kubernetes_pods_pull_the_digest_from_the_fleet_s_repository() -> None:
    graph = example_graph("chat-serve-k8s")
    repositories = graph.of_type("aws:ecr/repository:Repository")
    assert sorted(graph.provider_of(r).inputs["region"] for r in repositories) == ["eu-central-1", "us-east-1"]  # type: ignore[union-attr]
    for deployment in graph.of_type("kubernetes:apps/v1:Deployment"):
        region = "us-east-1" if "us-east-1" in deployment.name else "eu-central-1"
        image = f"{ACCOUNT}.dkr.ecr.{region}.amazonaws.com/chat-k8s/vllm-openai@{DIGEST}"
        spec = deployment.inputs["spec"]["template"]["spec"]
        assert spec["containers"][0]["image"] == image
        assert "docker.io" not in json.dumps(spec) and "vllm/vllm-openai:" not in json.dumps(spec)


def test_a_mirror_needs_a_digest_and_a_pull_through_cache_of_docker_hub_warns() -> None:
    from helpers import checked, rules_fired

    assert "mirror-without-digest" in rules_fired(checked("chat-serve", spec={"server_image_digest": None}))
    cached = checked("chat-serve", spec={"image_source": "ecr_pull_through"})
    assert "image-needs-registry-credential" in rules_fired(cached)
    assert "image-needs-registry-credential" not in rules_fired(checked("chat-serve"))
    graph = graph_for("chat-serve", {"image_source": "ecr_pull_through"})
    assert len(graph.of_type("aws:ecr/pullThroughCacheRule:PullThroughCacheRule")) == 4


# ---- the mirror script ------------------------------------------------------------------------------------------
FAKE_CRANE = r"""#!/bin/bash
# crane stand-in: records each call; `digest` answers from $CRANE_STATE/<ref> (copied refs get the source digest,
# or $CRANE_WRONG_DIGEST when set: a registry that rewrote the manifest).
echo "$*" >> "$CRANE_LOG"
key() { printf '%s' "$1" | tr '/:@' '___'; }
case "$1" in
  auth) cat > /dev/null ;;
  digest) [ -f "$CRANE_STATE/$(key "$2")" ] && cat "$CRANE_STATE/$(key "$2")" || exit 1 ;;
  copy)
    digest=${CRANE_WRONG_DIGEST:-${2##*@}}
    printf '%s' "$digest" > "$CRANE_STATE/$(key "$3")"
    printf '%s' "$digest" > "$CRANE_STATE/$(key "${3%:*}@$digest")" ;;
esac
"""


@pytest.fixture(scope="module")
def aws_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def run(tmp_path: Path, aws_url: str, **extra: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    urllib.request.urlopen(urllib.request.Request(f"{aws_url}/moto-api/reset", method="POST")).read()
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    (bin_dir / "crane").write_text(FAKE_CRANE)
    (bin_dir / "crane").chmod(0o755)
    if not (bin_dir / "aws").exists():
        (bin_dir / "aws").symlink_to(AWS_CLI)
    script = tmp_path / "mirror-image.sh"
    script.write_text(mirror_script(inputs_for("chat-serve").spec, ACCOUNT, REGIONS))  # type: ignore[arg-type]
    log = tmp_path / "crane.log"
    env = {
        "PATH": f"{bin_dir}:{SYSTEMD_PATH}",
        "HOME": str(tmp_path),
        "AWS_ENDPOINT_URL": aws_url,
        "AWS_ACCESS_KEY_ID": "operator",
        "AWS_SECRET_ACCESS_KEY": "operator",
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "CRANE_LOG": str(log),
        "CRANE_STATE": str(state),
        **extra,
    }
    result = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120)
    return result, log.read_text().splitlines() if log.exists() else []


def test_the_mirror_copies_the_digest_into_every_region_and_reads_it_back(tmp_path: Path, aws_url: str) -> None:
    result, calls = run(tmp_path, aws_url)
    assert result.returncode == 0, result.stderr
    tag = DIGEST.replace(":", "-")
    for region in REGIONS:
        repo = f"{ACCOUNT}.dkr.ecr.{region}.amazonaws.com/chat-serve/vllm-openai"
        # logged in with the token `aws ecr get-login-password` got from (moto's) ECR, on stdin
        assert f"auth login {ACCOUNT}.dkr.ecr.{region}.amazonaws.com --username AWS --password-stdin" in calls
        assert f"copy docker.io/vllm/vllm-openai@{DIGEST} {repo}:{tag}" in calls
        assert f"digest {repo}:{tag}" in calls
        assert f"{region}: {repo}@{DIGEST}" in result.stdout
    # Run again: every region has the digest, nothing is copied twice.
    rerun, calls = run(tmp_path, aws_url)
    assert rerun.returncode == 0 and rerun.stdout.count("is there already") == len(REGIONS)
    assert sum(c.startswith("copy ") for c in calls) == len(REGIONS)  # only the first run's copies


def test_a_copy_with_another_digest_fails(tmp_path: Path, aws_url: str) -> None:
    result, _ = run(tmp_path, aws_url, CRANE_WRONG_DIGEST="sha256:" + "0" * 64)
    assert result.returncode == 1
    assert "not the pinned image" in result.stderr


def test_the_mirror_script_passes_shellcheck(tmp_path: Path) -> None:
    check = shellcheck(mirror_script(inputs_for("chat-serve").spec, ACCOUNT, REGIONS), tmp_path)  # type: ignore[arg-type]
    assert check.returncode == 0, check.stdout
