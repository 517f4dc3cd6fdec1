"""The Pod Security Standards judge on hand-made pods: each case is one row of the Kubernetes docs' tables
("Pod Security Standards", Baseline and Restricted), and the level a real workload's pods get."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpuinfra.graph import pod_security
from gpuinfra.graph.pod_security import BASELINE, PRIVILEGED, RESTRICTED

RESTRICTED_POD: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "c",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
    "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "x"}}],
}


def edited(**changes: Any) -> dict[str, Any]:
    pod = copy.deepcopy(RESTRICTED_POD)
    container = pod["containers"][0]
    for key, value in changes.items():
        target = container["securityContext"] if key.startswith("c_") else pod
        target[key.removeprefix("c_")] = value
    return pod


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (RESTRICTED_POD, RESTRICTED),
        # Restricted-only rows: privilege escalation, capabilities not dropped, seccomp unset, root allowed.
        (edited(c_allowPrivilegeEscalation=True), BASELINE),
        (edited(c_capabilities={}), BASELINE),
        (edited(securityContext={"runAsNonRoot": True}), BASELINE),
        (edited(securityContext={"seccompProfile": {"type": "RuntimeDefault"}}), BASELINE),
        (edited(volumes=[{"name": "v", "nfs": {"server": "s", "path": "/"}}]), BASELINE),
        # Baseline rows: host namespaces, privileged, capabilities beyond the default set, hostPath, host ports.
        (edited(hostNetwork=True), PRIVILEGED),
        (edited(c_privileged=True), PRIVILEGED),
        (edited(c_capabilities={"drop": ["ALL"], "add": ["IPC_LOCK"]}), PRIVILEGED),
        (edited(volumes=[{"name": "v", "hostPath": {"path": "/fsx"}}]), PRIVILEGED),
        (edited(c_seccompProfile={"type": "Unconfined"}), PRIVILEGED),
        # A baseline-default capability is fine at baseline, not at restricted.
        (edited(c_capabilities={"drop": ["ALL"], "add": ["CHOWN"]}), BASELINE),
        (edited(c_capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}), RESTRICTED),
    ],
)
def test_level_follows_the_standard(pod: dict[str, Any], expected: str) -> None:
    assert pod_security.level(pod) == expected


def test_snake_case_pulumi_inputs_are_read_like_the_api() -> None:
    snake = {
        "security_context": {"run_as_non_root": True, "seccomp_profile": {"type": "RuntimeDefault"}},
        "containers": [
            {"name": "c", "security_context": {"allow_privilege_escalation": False, "capabilities": {"drop": ["ALL"]}}}
        ],
    }
    assert pod_security.level(snake) == RESTRICTED


def test_a_namespace_enforces_its_least_strict_pod() -> None:
    assert pod_security.strictest_for([RESTRICTED_POD, edited(hostPID=True)]) == PRIVILEGED
    assert pod_security.strictest_for([RESTRICTED_POD]) == RESTRICTED
    assert pod_security.strictest_for([]) == RESTRICTED


def test_ipc_lock_keeps_a_fabric_training_namespace_privileged() -> None:
    """EFA and InfiniBand pods add IPC_LOCK (pinned memory), outside the baseline's capability list."""
    from helpers import example_graph

    graph = example_graph("llm-train-eks")
    (namespace,) = graph.of_type("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == PRIVILEGED
    serving = example_graph("chat-serve-k8s").of_type("kubernetes:core/v1:Namespace")
    assert {n.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] for n in serving} == {RESTRICTED}
