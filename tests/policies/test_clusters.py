"""Separation on Kubernetes: clusters are registered in the organization file with their purpose; a stack that
reaches another purpose's cluster (by kubeconfig key or API server) or assumes a role outside its purpose (in its
kubeconfig, or for its pods through IRSA or EKS Pod Identity) is refused. Planted into the examples' real graphs."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import build_plan
from gpuinfra.policy.facts import StackFacts
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.spec import Organization
from helpers import apply, example_graph, inputs_for, org_data
from policy_helpers import edited, facts_for

POLICY = "separation-kubernetes"
TRAINING_ROLE = "arn:aws:iam::111111111111:role/gpuinfra-deploy"
INFERENCE_ROLE = "arn:aws:iam::222222222222:role/chat-k8s-weights-reader"
TRAIN_SERVER = "https://train.dc-east.example:6443"
K8S_PROVIDER = "pulumi:providers:kubernetes"

COVERS = ["separation-kubernetes"]
"""Failing and passing cases below (test_registration reads this)."""


def messages(stack: str, graph: object, facts: StackFacts) -> list[str]:
    run = police(graph, facts, pack_config())  # type: ignore[arg-type]
    return [v.message for v in run.violations if v.rule == POLICY and v.level.enforcement == "mandatory"]


@pytest.mark.parametrize("stack", ["chat-serve-k8s", "llm-train-eks", "llm-train-onprem", "chat-serve"])
def test_the_unchanged_examples_pass(stack: str) -> None:
    assert messages(stack, example_graph(stack), facts_for(stack)) == []


def facts_with_key(key: str) -> StackFacts:
    """chat-serve-k8s reading us-east-1's kubeconfig under `key` (the key set, as a secret, in its config)."""
    inputs = inputs_for(
        "chat-serve-k8s", {"kubernetes.kubeconfig_keys.us-east-1": key}, config={key: {"secure": "AAAA"}}
    )
    catalog = load_catalog()
    return StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog)


def test_an_inference_stack_using_the_training_clusters_kubeconfig_is_refused() -> None:
    (message,) = messages("chat-serve-k8s", example_graph("chat-serve-k8s"), facts_with_key("gpuinfra:kube-dc-east"))
    assert "kubeconfig of cluster train-dc-east ('gpuinfra:kube-dc-east'), a training cluster" in message


def test_an_unregistered_kubeconfig_key_is_refused() -> None:
    (message,) = messages("chat-serve-k8s", example_graph("chat-serve-k8s"), facts_with_key("gpuinfra:kube-elsewhere"))
    assert "'gpuinfra:kube-elsewhere', which is no cluster the organization file registers" in message


def kubeconfig(server: str, role: str) -> str:
    """An EKS-style kubeconfig: token from `aws eks get-token --role-arn` (AWS CLI reference, eks get-token)."""
    return (
        f"apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
        "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
        f"      command: aws\n      args: [eks, get-token, --cluster-name, c, --role-arn, '{role}']\n"
    )


def test_a_readable_kubeconfig_is_judged_by_its_server_and_role() -> None:
    org = {"clusters.train-dc-east.server": TRAIN_SERVER}
    facts = facts_for("chat-serve-k8s", org=org)
    graph = edited(
        example_graph("chat-serve-k8s"),
        [(K8S_PROVIDER, "k8s-us-east-1", {"kubeconfig": kubeconfig(TRAIN_SERVER, TRAINING_ROLE)})],
    )
    found = messages("chat-serve-k8s", graph, facts)
    assert any(f"points at cluster train-dc-east ({TRAIN_SERVER}), a training cluster" in m for m in found), found
    assert any(f"assume role {TRAINING_ROLE} in ml-training (111111111111), a training account" in m for m in found)
    unknown = edited(
        example_graph("chat-serve-k8s"),
        [(K8S_PROVIDER, "k8s-us-east-1", {"kubeconfig": kubeconfig("https://x.example", INFERENCE_ROLE)})],
    )
    (message,) = messages("chat-serve-k8s", unknown, facts)
    assert "points at https://x.example, which is no cluster the organization file registers" in message


def test_pods_assuming_another_purposes_role_are_refused() -> None:
    irsa = {"metadata.annotations": {"eks.amazonaws.com/role-arn": TRAINING_ROLE}}
    graph = edited(
        example_graph("chat-serve-k8s"), [("kubernetes:core/v1:ServiceAccount", "chat-k8s-us-east-1-sa", irsa)]
    )
    found = messages("chat-serve-k8s", graph, facts_for("chat-serve-k8s"))
    assert found and "chat-k8s-us-east-1-sa: its pods assume role" in found[0], found
    pod_identity = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
    graph = edited(example_graph("llm-train-eks"), [(pod_identity, None, {"roleArn": INFERENCE_ROLE})])
    found = messages("llm-train-eks", graph, facts_for("llm-train-eks"))  # every association: the pruner's too
    assert found and all(
        f"its pods assume role {INFERENCE_ROLE} in ml-inference (222222222222), an inference account" in m
        for m in found
    ), found


def test_a_cluster_registered_in_another_purposes_account_is_refused_by_the_schema() -> None:
    data = apply(org_data(), {"clusters.serve-us-east-1.account": "ml-training"})
    with pytest.raises(ValueError, match="cluster 'serve-us-east-1' \\(inference\\) runs in account 'ml-training'"):
        Organization.model_validate(data)


# ---- identified by the CA, whatever URL reaches it ----------------------------------------------------------
def ca_certificate(tmp_path: Path, name: str) -> tuple[str, str]:
    """A self-signed CA made by openssl, as base64 PEM (a kubeconfig's certificate-authority-data), and its SHA-256
    fingerprint as `openssl x509 -fingerprint -sha256` prints it (the figure the organization file registers)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed") if os.environ.get("CI") else pytest.skip("no openssl")
    key, cert = tmp_path / f"{name}.key", tmp_path / f"{name}.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}"],
        check=True, capture_output=True,
    )  # fmt: skip
    shown = subprocess.run(
        ["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", str(cert)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return base64.b64encode(cert.read_bytes()).decode(), shown.strip().split("=", 1)[1]


def kubeconfig_with_ca(server: str, ca_data: str) -> str:
    return (
        f"apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n"
        f"    certificate-authority-data: {ca_data}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"
    )


def test_the_training_cluster_under_another_url_is_caught_by_its_ca(tmp_path: Path) -> None:
    """A serving stack whose Kubernetes provider reaches the training cluster by an address the organization file
    does not list (its IP, an alias): the CA certificate names the cluster."""
    ca_data, fingerprint = ca_certificate(tmp_path, "train-dc-east")
    facts = facts_for("chat-serve-k8s", org={"clusters.train-dc-east.ca_sha256": fingerprint})
    graph = edited(
        example_graph("chat-serve-k8s"),
        [(K8S_PROVIDER, "k8s-us-east-1", {"kubeconfig": kubeconfig_with_ca("https://10.20.0.5:6443", ca_data)})],
    )
    found = messages("chat-serve-k8s", graph, facts)
    want = "points at cluster train-dc-east (its CA, fingerprint "
    assert any(want in m and "at https://10.20.0.5:6443), a training cluster" in m for m in found), found


def test_an_inference_cluster_under_another_url_is_its_own_by_its_ca(tmp_path: Path) -> None:
    ca_data, fingerprint = ca_certificate(tmp_path, "serve-us-east-1")
    facts = facts_for("chat-serve-k8s", org={"clusters.serve-us-east-1.ca_sha256": fingerprint})
    graph = edited(
        example_graph("chat-serve-k8s"),
        [(K8S_PROVIDER, "k8s-us-east-1", {"kubeconfig": kubeconfig_with_ca("https://10.80.0.5:6443", ca_data)})],
    )
    assert messages("chat-serve-k8s", graph, facts) == []
    other, _ = ca_certificate(tmp_path, "elsewhere")  # a CA nobody registers, at an unlisted URL: refused
    graph = edited(
        example_graph("chat-serve-k8s"),
        [(K8S_PROVIDER, "k8s-us-east-1", {"kubeconfig": kubeconfig_with_ca("https://10.80.0.5:6443", other)})],
    )
    (message,) = messages("chat-serve-k8s", graph, facts)
    assert "points at https://10.80.0.5:6443, which is no cluster the organization file registers" in message
