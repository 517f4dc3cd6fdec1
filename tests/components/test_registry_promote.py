"""The promote script (templates/registry/promote.sh.j2) run as an operator runs it (bash, the real AWS CLI,
python3, credentials that may assume the promote role) against moto's S3 and STS on 127.0.0.1; shellcheck on it.

Expected figures are by hand: the lock is 90 days (the example registry's model_lock_days default) from now."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import RegistryPlan, build_plan
from gpuinfra.pulumi.components.registry.promote import promote_script
from helpers import inputs_for
from moto.server import ThreadedMotoServer
from node_fakes import AWS_CLI, SYSTEMD_PATH, shellcheck

ROLE = "arn:aws:iam::333333333333:role/model-registry-promote-1a2b3c4"
BUCKET = "acme-model-registry"
FILES = {"config.json": b'{"model_type": "llama"}', "shards/model-00001.safetensors": bytes(range(256)) * 64}


@pytest.fixture(scope="module")
def plan() -> RegistryPlan:
    inputs = inputs_for("model-registry")
    built = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(built, RegistryPlan)
    return built


@pytest.fixture(scope="module")
def aws_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(aws_url: str) -> Any:
    urllib.request.urlopen(urllib.request.Request(f"{aws_url}/moto-api/reset", method="POST")).read()
    client = boto3.client(
        "s3", region_name="us-east-1", endpoint_url=aws_url, aws_access_key_id="t", aws_secret_access_key="t"
    )
    # As the registry stack leaves it: versioned, Object Lock enabled, no default retention on the primary.
    client.create_bucket(Bucket=BUCKET, ObjectLockEnabledForBucket=True)
    return client


def upload(s3: Any, source: str, files: dict[str, bytes], manifest: list[dict[str, Any]] | None = None) -> None:
    for path, data in files.items():
        s3.put_object(Bucket=BUCKET, Key=f"uploads/{source}{path}", Body=data)
    entries = manifest or [
        {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for p, d in files.items()
    ]
    s3.put_object(Bucket=BUCKET, Key=f"uploads/{source}manifest.json", Body=json.dumps({"files": entries}))


def run(
    script: str, tmp_path: Path, aws_url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """bash on the script, as an operator's shell: the AWS CLI and python3 on PATH, credentials from the
    environment (which the script trades for the promote role's), no ~/.aws of this machine."""
    path = tmp_path / "promote.sh"
    path.write_text(script)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "aws").exists():
        (bin_dir / "aws").symlink_to(AWS_CLI)
    environment = {
        "PATH": f"{bin_dir}:{SYSTEMD_PATH}",
        "HOME": str(tmp_path),
        "AWS_ENDPOINT_URL": aws_url,
        "AWS_ACCESS_KEY_ID": "operator",
        "AWS_SECRET_ACCESS_KEY": "operator",
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
    }
    return subprocess.run(
        ["bash", str(path), *args], env={**environment, **(env or {})}, capture_output=True, text=True, timeout=180
    )


def released(s3: Any, prefix: str = "models/") -> dict[str, bytes]:
    listing = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listing}


def test_a_verified_upload_is_released_locked_with_its_manifest(
    plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path
) -> None:
    upload(s3, "runs/ft-42/", FILES)
    result = run(promote_script(plan, ROLE), tmp_path, aws_url, "runs/ft-42/", "llama-ft", "v1")
    assert result.returncode == 0, result.stderr
    out = released(s3)
    assert {k.removeprefix("models/llama-ft/v1/") for k in out} == {*FILES, "manifest.json"}
    for path, data in FILES.items():
        assert out[f"models/llama-ft/v1/{path}"] == data
    manifest = json.loads(out["models/llama-ft/v1/manifest.json"])
    assert manifest == json.loads(s3.get_object(Bucket=BUCKET, Key="uploads/runs/ft-42/manifest.json")["Body"].read())
    expected = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=90)
    for key in out:
        # HeadObject returns the version's lock (S3 API reference; moto 5.2's GetObjectRetention answers 500)
        head = s3.head_object(Bucket=BUCKET, Key=key)
        assert head["ObjectLockMode"] == "GOVERNANCE", key
        assert abs((head["ObjectLockRetainUntilDate"] - expected).total_seconds()) < 600, key
    assert "model.weights_prefix: llama-ft/v1/" in result.stdout


def test_a_released_version_is_never_replaced(plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path) -> None:
    upload(s3, "runs/ft-42/", FILES)
    script = promote_script(plan, ROLE)
    assert run(script, tmp_path, aws_url, "runs/ft-42/", "llama-ft", "v1").returncode == 0
    before = released(s3)
    upload(s3, "runs/ft-43/", {"config.json": b"{}"})
    again = run(script, tmp_path, aws_url, "runs/ft-43/", "llama-ft", "v1")
    assert again.returncode == 1 and "released already" in again.stderr
    assert released(s3) == before


@pytest.mark.parametrize(
    "manifest",
    [
        [{"path": "config.json", "size": len(FILES["config.json"]), "sha256": "0" * 64}],  # wrong digest
        [{"path": "config.json", "size": 3, "sha256": hashlib.sha256(FILES["config.json"]).hexdigest()}],  # size
        [{"path": "../../etc/passwd", "size": 1, "sha256": "0" * 64}],  # outside the release
    ],
    ids=["sha256", "size", "traversal"],
)
def test_an_upload_that_does_not_match_its_manifest_releases_nothing(
    plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path, manifest: list[dict[str, Any]]
) -> None:
    upload(s3, "runs/bad/", FILES, manifest)
    result = run(promote_script(plan, ROLE), tmp_path, aws_url, "runs/bad/", "llama-ft", "v2")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert released(s3) == {}


@pytest.mark.parametrize(
    "args",
    [("runs/ft-42", "llama-ft", "v1"), ("runs/../x/", "llama-ft", "v1"), ("runs/ft-42/", "Llama FT", "v1"), ()],
    ids=["no-slash", "dotdot", "name", "none"],
)
def test_bad_arguments_exit_2_before_any_aws_call(
    plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run(promote_script(plan, ROLE), tmp_path, aws_url, *args)
    assert result.returncode == 2, result.stderr
    assert released(s3) == {}


def test_the_script_passes_shellcheck(plan: RegistryPlan, tmp_path: Path) -> None:
    result = shellcheck(promote_script(plan, ROLE), tmp_path)
    assert result.returncode == 0, result.stdout


def test_the_script_names_the_registry_and_the_lock_of_the_plan(plan: RegistryPlan) -> None:
    script = promote_script(plan, ROLE)
    assert "BUCKET=acme-model-registry\n" in script and "LOCK_DAYS=90\n" in script
    assert f"ROLE_ARN={ROLE}\n" in script and "UPLOADS=uploads/\n" in script and "MODELS=models/\n" in script
    assert os.linesep == "\n"


# ---- write-once: every object under models/ ---------------------------------------------------------------------
def test_a_released_shard_cannot_be_overwritten(plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path) -> None:
    """Every release object was created with If-None-Match: *, and S3 refuses a second create of the key (412
    PreconditionFailed, which moto implements): the shard keeps its bytes, so its sha256 still matches the manifest.

    moto 5.2 does not evaluate a bucket policy's Condition (it applies a Deny to every matching request, the
    conditional create included), so DenyModelOverwrite, which makes If-None-Match mandatory for every principal, is
    judged by the access evaluator instead: tests/preflight/test_access_flows.py."""
    from botocore.exceptions import ClientError

    upload(s3, "runs/ft-42/", FILES)
    assert run(promote_script(plan, ROLE), tmp_path, aws_url, "runs/ft-42/", "llama-ft", "v1").returncode == 0
    shard = "models/llama-ft/v1/shards/model-00001.safetensors"
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=BUCKET, Key=shard, Body=b"tampered", IfNoneMatch="*")
    assert refused.value.response["Error"]["Code"] == "PreconditionFailed"
    assert s3.get_object(Bucket=BUCKET, Key=shard)["Body"].read() == FILES["shards/model-00001.safetensors"]


def test_a_large_shard_goes_in_parts_created_once_and_locked(
    plan: RegistryPlan, s3: Any, aws_url: str, tmp_path: Path
) -> None:
    """Above the single-PUT limit (lowered here to 1 MiB; parts of 5 MiB, S3's minimum) the script uploads in parts
    and completes with If-None-Match: 12 MiB arrive as parts of 5, 5 and 2 MiB, intact and locked (moto 5.2 drops
    CreateMultipartUpload's lock headers, which S3 applies; the script also sets the completed version's retention,
    and that is what moto shows here)."""
    big = bytes(range(256)) * (12 * 4096)  # 12 MiB
    upload(s3, "runs/ft-big/", {"config.json": b"{}", "shards/model-00001.safetensors": big})
    env = {"PROMOTE_SINGLE_PUT_BYTES": str(1 << 20), "PROMOTE_PART_BYTES": str(5 << 20)}
    result = run(promote_script(plan, ROLE), tmp_path, aws_url, "runs/ft-big/", "llama-ft", "v9", env=env)
    assert result.returncode == 0, result.stderr
    key = "models/llama-ft/v9/shards/model-00001.safetensors"
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == big
    head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ObjectLockMode"] == "GOVERNANCE"
    assert head["ETag"].strip('"').endswith("-3")  # a multipart object of three parts (S3's ETag convention)
