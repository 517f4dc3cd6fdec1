"""The Google fleet's weights reach every region before its replicas serve: a Storage Transfer Service cross-bucket
replication job per region but the release's, with the grants Google's docs give its service agent; each region's
groups created after its job; a new VM waits until the release is complete in its own bucket (run with a stand-in
gcloud); the job judged by the storagetransfer v1 Discovery document, and priced as usage (unknown, not zero)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from gpuinfra.clouds.gcp.cost.book import price
from gpuinfra.clouds.gcp.preflight.discovery import check as gcp_check
from gpuinfra.graph import Graph, Resource
from helpers import example_graph, graph_for

STACK = "chat-serve-gcp"
JOB = "gcp:storage/transferJob:TransferJob"
MIG = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
BUCKET = "acme-chat-weights-{}"
"""The example's bucket stem (weights.bucket) and its regions: us-central1 first (the release's), europe-west4,
asia-southeast1 (stacks/Pulumi.chat-serve-gcp.yaml)."""


def _named(graph: Graph, name: str, kind: str | None = None) -> Resource:
    return next(r for r in graph.resources if r.name == name and (kind is None or r.type == kind))


def test_one_replication_job_per_region_but_the_releases() -> None:
    graph = example_graph(STACK)
    jobs = {r.name: r for r in graph.resources if r.type == JOB}
    assert set(jobs) == {"chat-serve-gcp-to-europe-west4", "chat-serve-gcp-to-asia-southeast1"}
    for region in ("europe-west4", "asia-southeast1"):
        spec = jobs[f"chat-serve-gcp-to-{region}"].inputs["replicationSpec"]
        assert spec["gcsDataSource"] == {"bucketName": BUCKET.format("us-central1")}
        assert spec["gcsDataSink"] == {"bucketName": BUCKET.format(region)}
        # "Delete options are not supported" and a replication job takes no custom name (storagetransfer docs)
        assert not {"deleteObjectsUniqueInSink", "deleteObjectsFromSourceAfterTransfer"} & set(spec["transferOptions"])
        assert "name" not in jobs[f"chat-serve-gcp-to-{region}"].inputs


def test_the_agent_holds_the_grants_before_each_job() -> None:
    """legacyBucketOwner on the source and legacyBucketWriter on the destination: what the console grants the
    Storage Transfer Service agent (cloud.google.com/storage/docs/using-cross-bucket-replication)."""
    graph = example_graph(STACK)
    source = _named(graph, "chat-serve-gcp-replication-source")
    assert (source.inputs["bucket"], source.inputs["role"]) == (
        BUCKET.format("us-central1"),
        "roles/storage.legacyBucketOwner",
    )
    for region in ("europe-west4", "asia-southeast1"):
        sink = _named(graph, f"chat-serve-gcp-replication-{region}")
        assert (sink.inputs["bucket"], sink.inputs["role"]) == (
            BUCKET.format(region),
            "roles/storage.legacyBucketWriter",
        )
        assert {source.urn, sink.urn} <= set(_named(graph, f"chat-serve-gcp-to-{region}").dependencies)


def test_each_regions_groups_come_after_its_weights_job() -> None:
    graph = example_graph(STACK)
    for r in graph.resources:
        if r.type != MIG:
            continue
        region = r.inputs["region"]
        jobs = {graph.by_urn[u].name for u in r.dependencies if graph.by_urn[u].type == JOB}
        assert jobs == (set() if region == "us-central1" else {f"chat-serve-gcp-to-{region}"}), r.name


def test_autohealing_waits_for_the_weights_as_long_as_the_vm_does() -> None:
    """initialDelaySec covers the cold start and the spec's wait (45 minutes by default), at most 3600 (compute v1)."""
    mig = _named(example_graph(STACK), "chat-serve-gcp-europe-west4-od", MIG)
    cold = mig.inputs["updatePolicy"]["minReadySec"]
    assert mig.inputs["autoHealingPolicies"]["initialDelaySec"] == min(3600, cold + 45 * 60)
    short = graph_for(STACK, {"weights.replication_wait_minutes": 5})
    assert (
        _named(short, "chat-serve-gcp-europe-west4-od", MIG).inputs["autoHealingPolicies"]["initialDelaySec"]
        == cold + 300
    )


def test_the_job_is_judged_by_the_storagetransfer_document() -> None:
    graph = example_graph(STACK)
    job = _named(graph, "chat-serve-gcp-to-europe-west4")
    assert gcp_check(job, graph) == []
    spec = job.inputs["replicationSpec"]
    bad = dataclasses.replace(
        job, inputs={**job.inputs, "replicationSpec": {**spec, "transferOptions": {"overwriteWhen": "SOMETIMES"}}}
    )
    (finding,) = gcp_check(bad, graph)
    assert finding.rule == "PF-GCP-API" and finding.path == "replicationSpec.transferOptions.overwriteWhen"
    assert "DIFFERENT, NEVER, ALWAYS" in finding.message and "storagetransfer v1" in finding.source


def test_the_job_is_priced_as_usage_never_zero() -> None:
    graph = example_graph(STACK)
    job = _named(graph, "chat-serve-gcp-to-europe-west4")
    cost = price(job, graph, {"urn": job.urn, "type": job.type, "name": job.name, "component": "weights"})
    (line,) = cost.lines
    assert line.monthly is None and "usage-based" in line.flags and "not zero" in (line.note or "")


# ---- the VM's wait, run -------------------------------------------------------------------------------------
FAKE_GCLOUD = """#!/bin/bash
# `gcloud storage cp SRC DEST` copies the recorded manifest; `gcloud storage ls --long --recursive` prints the
# recorded listing (gcloud's format: size, time, URL; then a TOTAL line).
case "$2" in
  cp) cp "$RECORDED/manifest.json" "$4" ;;
  ls) cat "$RECORDED/listing.txt" ;;
esac
"""


def _wait_block(tmp_path: Path) -> Path:
    """The startup script's wait (its `complete` function and loop), with the fleet's SOURCE and CACHE."""
    script = _named(graph_for(STACK, {"weights.replication_wait_minutes": 0}), "chat-serve-gcp-europe-west4-od-tpl")
    text = script.inputs["metadata"]["startup-script"]
    block = text[text.index("complete() {") : text.index("\ndone\n") + len("\ndone\n")]
    path = tmp_path / "wait.sh"
    path.write_text(f'set -euo pipefail\nSOURCE=gs://b/m/v3/\nCACHE={tmp_path}/cache\nmkdir -p "$CACHE"\n{block}')
    return path


@pytest.mark.parametrize(
    ("listing", "done"),
    [
        (
            "  100  2026-12-01T00:00:00Z  gs://b/m/v3/a.safetensors\n  7  2026-12-01T00:00:00Z  gs://b/m/v3/config.json\n",
            0,
        ),
        ("  100  2026-12-01T00:00:00Z  gs://b/m/v3/a.safetensors\n", 1),  # config.json not replicated yet
        (
            "  99  2026-12-01T00:00:00Z  gs://b/m/v3/a.safetensors\n  7  2026-12-01T00:00:00Z  gs://b/m/v3/config.json\n",
            1,
        ),
    ],
    ids=["complete", "a-file-missing", "a-file-short"],
)
def test_a_new_vm_starts_only_on_a_complete_release(tmp_path: Path, listing: str, done: int) -> None:
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    files = [
        {"path": "a.safetensors", "size": 100, "sha256": "0" * 64},
        {"path": "config.json", "size": 7, "sha256": "1" * 64},
    ]
    (recorded / "manifest.json").write_text(__import__("json").dumps({"files": files}))
    (recorded / "listing.txt").write_text(listing + "TOTAL: 2 objects, 107 bytes (107B)\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gcloud").write_text(FAKE_GCLOUD)
    (bin_dir / "gcloud").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "RECORDED": str(recorded)}
    run = subprocess.run(["bash", str(_wait_block(tmp_path))], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == done, run.stderr
    if done:
        assert "the release is not complete in europe-west4 after 0 s" in run.stderr


# ---- the pack: a copy is an edge between projects ------------------------------------------------------------
def _planted_job(inputs: dict[str, object]) -> Graph:
    graph = example_graph(STACK)
    job = _named(graph, "chat-serve-gcp-to-europe-west4")
    return dataclasses.replace(
        graph,
        resources=(*graph.resources, dataclasses.replace(job, urn=job.urn + "-planted", name="planted", inputs=inputs)),
    )


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        (
            {
                "project": "acme-serve-prod",
                "replicationSpec": {
                    "gcsDataSource": {"bucketName": BUCKET.format("us-central1")},
                    "gcsDataSink": {"bucketName": "research-checkpoints"},
                },
            },
            "a copy to bucket 'research-checkpoints', which this stack does not create",
        ),
        (
            {
                "project": "acme-serve-prod",
                "replicationSpec": {
                    "gcsDataSource": {"bucketName": "someone-elses-weights"},
                    "gcsDataSink": {"bucketName": BUCKET.format("europe-west4")},
                },
            },
            "a copy from bucket 'someone-elses-weights'",
        ),
        (
            {"project": "acme-train-prod", "replicationSpec": {}},
            "a Storage Transfer job in project acme-train-prod (gcp-research), a training project",
        ),
    ],
    ids=["to-a-bucket-not-created", "from-a-bucket-not-created", "in-a-training-project"],
)
def test_a_copy_out_of_the_stacks_buckets_is_refused(inputs: dict[str, object], says: str) -> None:
    from gpuinfra.policy.pack import police_stack
    from helpers import checked, inputs_for

    run = police_stack(inputs_for(STACK), checked(STACK).plan, _planted_job(inputs))
    found = [v.message for v in run.violations if v.rule == "separation-gcp-edges"]
    assert any(says in m for m in found), found
    clean = police_stack(inputs_for(STACK), checked(STACK).plan, example_graph(STACK))
    assert not [v for v in clean.violations if v.rule == "separation-gcp-edges"]


def test_a_wait_past_autohealings_longest_delay_is_warned() -> None:
    """Autohealing's initial delay stops at 3600 s (compute v1): a cold start plus a 60-minute wait passes it."""
    from helpers import checked

    found = [f for f in checked(STACK, {"weights.replication_wait_minutes": 60}).findings]
    warned = [f for f in found if f.rule == "gcp-weights-wait-past-autoheal"]
    assert len(warned) == 1 and warned[0].level == 30 and warned[0].path == ("weights", "replication_wait_minutes")
    assert "past autohealing's longest initial delay (3600 s)" in warned[0].message
    assert not [f for f in checked(STACK).findings if f.rule == "gcp-weights-wait-past-autoheal"]


def test_the_review_reads_the_jobs_replacements_from_its_discovery_document() -> None:
    """transferJobs has a patch method (storagetransfer v1): a changed spec updates the job in place; its project
    is part of the request's address (projectId), so moving the job replaces it."""
    from gpuinfra.review.effects import replacements

    path = "replicationSpec.gcsDataSink.bucketName"
    assert replacements().effect(JOB, path, "a", "b", {}) == ("update", None)
    found, why = replacements().effect(JOB, "project", "a", "b", {})
    assert found == "replace" and "storagetransfer v1 Discovery document" in str(why)
