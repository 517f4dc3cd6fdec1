"""Reading real Pulumi output: the samples and schema notes in tests/fixtures/pulumi (see SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.graph import SECRET, UNKNOWN
from gpuinfra.graph.readers import plain, provider_urn, read_events, read_export, read_preview
from gpuinfra.review.documents import EVENTS, EXPORT, GPUINFRA, PREVIEW, load_document
from helpers import ROOT, gpuinfra

FIXTURES = ROOT / "tests" / "fixtures" / "pulumi"
"""Real Pulumi CLI output, byte-identical to its public sources (SOURCES.md there, with licenses)."""


def load(name: str):  # type: ignore[no-untyped-def]
    return json.loads((FIXTURES / name).read_text())


def events(name: str) -> list:  # type: ignore[type-arg]
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


def test_plain_blinds_secrets_names_assets_and_drops_defaults() -> None:
    state = {
        "__defaults": ["x"],
        "pw": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "abc"},
        "code": {"4dabf18193072939515e22adb298388d": "0def7320c3a5731c473e5ecbe6d01bc7", "hash": "h1"},
        "n": 3.0,
        "nested": [{"__defaults": [], "a": 1}],
    }
    assert plain(state) == {"pw": SECRET, "code": "<asset h1>", "n": 3, "nested": [{"a": 1}]}


def test_provider_reference_drops_the_id() -> None:
    ref = "urn:pulumi:dev::sample::pulumi:providers:aws::default_6_63_0::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    assert provider_urn(ref) == "urn:pulumi:dev::sample::pulumi:providers:aws::default_6_63_0"


def test_preview_with_sames_gives_old_and_new_graphs_and_pulumi_verdicts() -> None:
    preview = read_preview(load("stratify-sample-preview-update.json"), "x")
    assert preview.complete
    assert len(preview.old["dev"].resources) == len(preview.new["dev"].resources) == 16
    updates = [s for s in preview.steps.values() if s.op == "update"]
    assert [(s.type, s.diff_reasons, s.detailed) for s in updates] == [
        ("aws:lambda/function:Function", ("code",), {"code": "update"})
    ]


def test_preview_of_creates_has_no_old_state_and_keeps_unknowns() -> None:
    preview = read_preview(load("stratify-sample-preview-creates.json"), "x")
    assert preview.old == {} and len(preview.new["dev"].resources) == 16
    assert any(UNKNOWN in json.dumps(r.inputs) for r in preview.new["dev"].resources)


def test_stack_export_is_a_graph_with_providers_linked() -> None:
    graph = read_export(load("stratify-sample-export.json"), "x")["dev"]
    bucket = graph.named("aws:s3/bucket:Bucket", "docs")
    assert graph.provider_of(bucket) is not None
    assert bucket.inputs["bucket"] == "docs-4936161" and "__defaults" not in bucket.inputs


def test_engine_events_give_the_logical_replace_step_with_its_reason() -> None:
    preview = read_events(events("pulumi-engine-events-webserver-userdata.jsonl"), "x")
    replaces = [s for s in preview.steps.values() if s.op == "replace"]
    assert [(s.type, s.replace_reasons) for s in replaces] == [("aws:ec2/instance:Instance", ("userData",))]
    assert preview.config["aws:region"] == "us-west-2"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("stratify-sample-preview-update.json", PREVIEW),
        ("stratify-sample-export.json", EXPORT),
        ("pulumi-engine-events-webserver-userdata.jsonl", EVENTS),
    ],
)
def test_document_kind_is_read_from_its_shape(name: str, kind: str) -> None:
    assert load_document(FIXTURES / name).kind == kind


def test_gpuinfra_report_kind_and_version(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"version": 1, "command": "preview", "stacks": []}))
    assert load_document(path).kind == GPUINFRA
    path.write_text(json.dumps({"version": 2, "command": "preview", "stacks": []}))
    with pytest.raises(InputError, match="version 2 is not supported"):
        load_document(path)


def test_unknown_document_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a gpuinfra preview"):
        load_document(path)


def test_diff_of_one_pulumi_preview_shows_pulumis_replacement() -> None:
    done = gpuinfra("diff", str(FIXTURES / "pulumi-engine-events-webserver-userdata.jsonl"), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (row,) = report["stacks"][0]["resources"]
    assert row["action"] == "replace" and row["name"] == "web-server-www"
    assert row["changes"][0]["path"] == "userData" and row["changes"][0]["reason"] == "pulumi"


def test_export_as_base_and_preview_as_head(tmp_path: Path) -> None:
    done = gpuinfra(
        "diff",
        str(FIXTURES / "stratify-sample-export.json"),
        str(FIXTURES / "stratify-sample-preview-update.json"),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["stacks"][0]["resources"]
    assert {(r["name"], r["action"]) for r in rows} >= {("docsHandler", "update")}


def test_policy_violations_in_a_gpuinfra_report_become_findings() -> None:
    from gpuinfra.review.documents import findings_of

    report = {
        "findings": [{"rule": "r", "level": "warning", "path": "a.b", "message": "m"}],
        "policy": {
            "pack": "gpuinfra",
            "violations": [
                {
                    "policy": "no-public-bucket",
                    "level": "mandatory",
                    "message": "public",
                    "resource": "urn:pulumi:s::p::aws:s3/bucket:Bucket::logs",
                    "resource_name": "logs",
                },
                {"policy": "budget-within-account", "level": "advisory", "message": "over", "resource": None},
            ],
        },
    }
    found = findings_of("s", report)
    assert [(f.source, f.rule, f.level, f.where) for f in found] == [
        ("validator", "r", "warning", "a.b"),
        ("policy", "no-public-bucket", "mandatory", "logs"),
        ("policy", "budget-within-account", "advisory", ""),
    ]
    assert found[1].blocking and not found[2].blocking


def test_the_samples_are_byte_identical_to_their_sources() -> None:
    """Each sample's git blob id is the one SOURCES.md records for the public file it copies."""
    import hashlib
    import re

    sources = (FIXTURES / "SOURCES.md").read_text()
    for sample in sorted(FIXTURES.glob("*.json*")):
        data = sample.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        section = sources[sources.index(f"{sample.name}") :]
        assert re.search(rf"blob `{blob}`", section.split("## ")[0], flags=re.IGNORECASE), sample.name


def test_an_export_against_a_preview_shows_no_false_delete_of_the_default_provider() -> None:
    """The export lists `default_6_63_0`; `pulumi preview --json` emits no step for default providers: the diff
    leaves it out (and says so) instead of reporting it deleted."""
    export = json.loads((FIXTURES / "stratify-sample-export.json").read_text())
    assert any(r["urn"].endswith("::default_6_63_0") for r in export["deployment"]["resources"])
    done = gpuinfra(
        "diff",
        str(FIXTURES / "stratify-sample-export.json"),
        str(FIXTURES / "stratify-sample-preview-update.json"),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = report["stacks"][0]["resources"]
    assert not [r for r in rows if r["action"] == "delete"], rows
    assert any("default_6_63_0" in n for n in report["notes"])


def test_event_lines_are_read_with_pulumis_own_engine_event_type(tmp_path: Path) -> None:
    """A resourcePreEvent whose step op Pulumi's OpType does not know is refused, naming the line."""
    from pulumi.automation.events import EngineEvent, OpType

    lines = (FIXTURES / "pulumi-engine-events-webserver-userdata.jsonl").read_text().splitlines()
    events = [EngineEvent.from_json(json.loads(line)) for line in lines if line.strip()]
    ops = [e.resource_pre_event.metadata.op for e in events if e.resource_pre_event is not None]
    assert OpType.REPLACE in ops or OpType.CREATE_REPLACEMENT in ops
    bad = {"sequence": 99, "timestamp": 1, "resourcePreEvent": {"metadata": {"op": "explode", "urn": "u"}}}
    broken = tmp_path / "events.jsonl"
    broken.write_text("\n".join([*lines, json.dumps(bad)]) + "\n")
    done = gpuinfra("diff", str(broken))
    assert done.returncode == 2
    assert "event 99 is not a Pulumi engine event" in done.stderr and "explode" in done.stderr


def test_one_step_reads_the_same_from_the_digest_and_the_event_log() -> None:
    """The two formats carry one step under different names (pkg/display/json.go's StepEventMetadata: oldState,
    newState, replaceReasons, diffReasons, detailedDiff kind; apitype's StepEventMetadata in the event log: old,
    new, keys, diffs, detailedDiff diffKind): read by one reader, they give the same steps and graphs."""
    urn = "urn:pulumi:dev::p::aws:ec2/instance:Instance::web"
    old = {"urn": urn, "type": "aws:ec2/instance:Instance", "inputs": {"userData": "a"}, "outputs": {}}
    new = {**old, "inputs": {"userData": "b"}}
    skipped = {"op": "delete-replaced", "urn": urn, "type": "aws:ec2/instance:Instance"}
    digest = {
        "steps": [
            {
                "op": "replace",
                "urn": urn,
                "oldState": old,
                "newState": new,
                "replaceReasons": ["userData"],
                "diffReasons": ["userData"],
                "detailedDiff": {"userData": {"kind": "update-replace"}},
            },
            skipped,
            "not a step",
        ]
    }
    log = [
        {"preludeEvent": {"config": {}}},
        {
            "resourcePreEvent": {
                "metadata": {
                    "op": "replace",
                    "urn": urn,
                    "old": old,
                    "new": new,
                    "keys": ["userData"],
                    "diffs": ["userData"],
                    "detailedDiff": {"userData": {"diffKind": "update-replace"}},
                }
            }
        },
        {"resourcePreEvent": {"metadata": skipped}},
    ]
    a, b = read_preview(digest, "x"), read_events(log, "x")
    assert a.steps == b.steps
    (step,) = a.steps.values()
    assert (step.op, step.replace_reasons, step.diff_reasons, step.detailed) == (
        "replace",
        ("userData",),
        ("userData",),
        {"userData": "update-replace"},
    )
    assert a.old["dev"].named("aws:ec2/instance:Instance", "web").inputs == {"userData": "a"}
    assert b.new["dev"].named("aws:ec2/instance:Instance", "web").inputs == {"userData": "b"}
