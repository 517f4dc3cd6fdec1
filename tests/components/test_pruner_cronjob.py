"""EKS and on premises get the same checkpoint pruner as the PCS login node: a CronJob running the very script the
login node's timer runs (tested on real layouts in test_prune_checkpoints.py), over the same run directories, under
its own ServiceAccount (on EKS bound to a role that may only list and tag the checkpoint prefix), outside Kueue."""

from __future__ import annotations

import base64
import email
import json
from typing import Any

import pytest
from gpuinfra.graph import Graph, Resource
from helpers import cloud_config, example_graph

CRONJOB = "kubernetes:batch/v1:CronJob"


def _one(graph: Graph, type_: str, suffix: str) -> Resource:
    (found,) = [r for r in graph.of_type(type_) if r.name.endswith(suffix)]
    return found


def _pod(cronjob: Resource) -> dict[str, Any]:
    return cronjob.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def _login_pruner() -> str:
    """The script the PCS stack's login node runs (from its launch template's user data)."""
    lt = _one(example_graph("llm-train"), "aws:ec2/launchTemplate:LaunchTemplate", "-login-lt")
    text = base64.b64decode(lt.inputs["userData"]).decode()
    part = next(p for p in email.message_from_string(text).walk() if p.get_content_type() == "text/cloud-config")
    files = {f["path"]: f["content"] for f in cloud_config(part.get_payload())["write_files"]}
    return files["/opt/gpuinfra/prune-checkpoints"]


def _normalized(script: str) -> list[str]:
    """The script without its cluster name and bucket, and the PCS login node's PrunerRuns metric (alarms.py)."""
    skip = (
        "bucket=",
        "# Checkpoint retention for",
        '[ "$status" -ne 0 ] || aws cloudwatch',
        "  --metric-name PrunerRuns",
        "region=",
        "namespace=",
        "cluster=",
    )
    return [line for line in script.splitlines() if not line.startswith(skip)]


@pytest.mark.parametrize(
    ("stack", "root", "volume"),
    [
        ("llm-train-eks", "/fsx/checkpoints", {"persistentVolumeClaim": {"claimName": "llm-train-eks-lustre"}}),
        ("llm-train-onprem", "/lustre/checkpoints", {"hostPath": {"path": "/lustre", "type": "Directory"}}),
    ],
)
def test_kubernetes_stacks_run_the_pruner_as_a_cronjob_over_the_run_directories(
    stack: str, root: str, volume: dict[str, Any]
) -> None:
    graph = example_graph(stack)
    cronjob = _one(graph, CRONJOB, "-pruner")
    spec = cronjob.inputs["spec"]
    assert spec["concurrencyPolicy"] == "Forbid" and spec["schedule"] == "*/15 * * * *"
    pod = _pod(cronjob)
    script = _one(graph, "kubernetes:core/v1:ConfigMap", "-pruner-script").inputs["data"]["prune-checkpoints"]
    assert f"root={root}\n" in script and "complete=COMPLETE\n" in script
    # the same code as the login node's (EKS: the same root too, and its own bucket; on premises: no bucket)
    if stack == "llm-train-eks":
        assert _normalized(script) == _normalized(_login_pruner())
    (container,) = pod["containers"]
    assert container["command"] == ["/bin/bash", "/opt/gpuinfra/prune-checkpoints"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["lustre"] == root.rsplit("/", 1)[0]
    assert {k: v for k, v in pod["volumes"][0].items() if k != "name"} == volume
    # Not on the accelerator nodes: no toleration of their taint (keyed by the catalog's resource, nvidia.com/gpu).
    assert not [t for t in pod.get("tolerations", []) if t.get("key") == "nvidia.com/gpu"]
    labels = cronjob.inputs["metadata"]["labels"]
    assert "kueue.x-k8s.io/queue-name" not in labels  # Kueue leaves it alone: never waits behind a run
    account = _one(graph, "kubernetes:core/v1:ServiceAccount", "-pruner-sa").inputs["metadata"]
    assert pod["serviceAccountName"] == account["name"] != "trainer"


def test_on_premises_has_no_bucket_to_tag() -> None:
    script = _one(example_graph("llm-train-onprem"), "kubernetes:core/v1:ConfigMap", "-pruner-script")
    assert "aws s3api" not in script.inputs["data"]["prune-checkpoints"]


def test_the_eks_pruner_has_its_own_role_that_can_only_list_and_tag_checkpoints() -> None:
    graph = example_graph("llm-train-eks")
    association = _one(graph, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "-pruner-identity").inputs
    account = _one(graph, "kubernetes:core/v1:ServiceAccount", "-pruner-sa").inputs["metadata"]
    assert (association["namespace"], association["serviceAccount"]) == (account["namespace"], account["name"])
    role = _one(graph, "aws:iam/role:Role", "-pruner-role")
    (policy,) = [p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if role.urn in p.dependencies]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    assert {a for s in statements for a in s["Action"]} == {"s3:PutObjectTagging", "s3:ListBucket"}
    bucket = "acme-llm-train-eks-checkpoints"
    assert {r for s in statements for r in s["Resource"]} == {
        f"arn:aws:s3:::{bucket}/checkpoints/*",
        f"arn:aws:s3:::{bucket}",
    }


def test_the_pruner_pod_keeps_only_the_privileges_it_needs() -> None:
    """Issue 47, least privilege: judged by the project's Pod Security Standards check (graph/pod_security.py).
    Baseline holds; of Restricted only the two stated exceptions remain (UID 0, and DAC_OVERRIDE and FOWNER to
    remove directories the trainers own), and every other Restricted control is set."""
    from gpuinfra.graph import pod_security
    from gpuinfra.pulumi.components.training.pruner import cronjob_spec

    spec = cronjob_spec("c", "img", "/fsx", {"persistentVolumeClaim": {"claimName": "x"}}, "cm")
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_security.meets(pod, pod_security.BASELINE) == []
    assert pod_security.meets(pod, pod_security.RESTRICTED) == [
        "container prune does not set runAsNonRoot true",
        "container prune adds capabilities besides NET_BIND_SERVICE",
    ]
    context = pod["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False and context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"], "add": ["DAC_OVERRIDE", "FOWNER"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"} == pod["securityContext"]["seccompProfile"]
    assert pod["automountServiceAccountToken"] is False
    tmp = next(m for m in pod["containers"][0]["volumeMounts"] if m["mountPath"] == "/tmp")  # sort's scratch
    assert next(v for v in pod["volumes"] if v["name"] == tmp["name"])["emptyDir"]


def test_the_scanner_input_carries_the_pruner_as_deployed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """tools/k8s_manifests.py (what docs/security.md's checkov table reads) writes the CronJob as the program
    registers it, and the JobSet's replicated Jobs as batch/v1 Jobs."""
    import importlib.util

    from helpers import ROOT
    from ruamel.yaml import YAML

    spec = importlib.util.spec_from_file_location("k8s_manifests", ROOT / "tools" / "k8s_manifests.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main([str(tmp_path), "llm-train-eks"]) == 0
    (cronjob,) = tmp_path.glob("llm-train-eks--CronJob--*.yaml")
    data = YAML(typ="safe", pure=True).load(cronjob.read_text())
    pod = data["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["securityContext"]["capabilities"]["drop"] == ["ALL"]
    (job,) = tmp_path.glob("llm-train-eks--Job--*-job-template-workers.yaml")
    assert YAML(typ="safe", pure=True).load(job.read_text())["kind"] == "Job"
