"""The Pod Security Standards level a pod spec meets, so each namespace gpuinfra creates can enforce the strictest
one its pods pass (Pod Security Admission: the `pod-security.kubernetes.io/enforce` namespace label).

The checks are the Kubernetes docs' "Pod Security Standards" tables (concepts/security/pod-security-standards):
Baseline forbids host namespaces, privileged containers, capabilities beyond its default set, hostPath volumes,
host ports, non-default /proc mounts, an Unconfined seccomp profile and unsafe sysctls; Restricted adds the volume
type allow-list, allowPrivilegeEscalation false, runAsNonRoot true (and runAsUser not 0), seccomp RuntimeDefault or
Localhost, and capabilities dropping ALL (adding NET_BIND_SERVICE at most). AppArmor and SELinux options are not
set by gpuinfra's pods and are not judged. Keys are read in camelCase; snake_case (pulumi input style) is folded."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (RESTRICTED, BASELINE, PRIVILEGED)
"""Strictest first."""
LABEL = "pod-security.kubernetes.io/"
BASELINE_CAPABILITIES = frozenset(
    {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
     "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
)  # fmt: skip
SAFE_SYSCTLS = frozenset(
    {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
     "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
     "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
     "net.ipv4.tcp_keepalive_probes"}
)  # fmt: skip
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)


def camel(value: Any) -> Any:
    """`value` with snake_case mapping keys folded to camelCase (run_as_non_root -> runAsNonRoot)."""
    if isinstance(value, Mapping):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), str(k)): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for key in ("containers", "initContainers", "ephemeralContainers") for c in pod.get(key) or []]


def baseline_problems(pod_spec: Mapping[str, Any]) -> list[str]:
    pod = camel(pod_spec)
    problems = [f"{k} is true" for k in ("hostNetwork", "hostPID", "hostIPC") if pod.get(k)]
    problems += [f"volume {v.get('name')} is a hostPath" for v in pod.get("volumes") or [] if "hostPath" in v]
    pod_context = pod.get("securityContext") or {}
    problems += [
        f"sysctl {s.get('name')} is not a safe sysctl"
        for s in pod_context.get("sysctls") or []
        if s.get("name") not in SAFE_SYSCTLS
    ]
    if (pod_context.get("seccompProfile") or {}).get("type") == "Unconfined":
        problems.append("the pod's seccomp profile is Unconfined")
    for c in _containers(pod):
        context, name = c.get("securityContext") or {}, c.get("name")
        if context.get("privileged"):
            problems.append(f"container {name} is privileged")
        added = set((context.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES
        if added:
            problems.append(f"container {name} adds {', '.join(sorted(added))}")
        if any(p.get("hostPort") for p in c.get("ports") or []):
            problems.append(f"container {name} uses a host port")
        if context.get("procMount") not in (None, "Default"):
            problems.append(f"container {name} sets procMount {context.get('procMount')}")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            problems.append(f"container {name}'s seccomp profile is Unconfined")
    return problems


def restricted_problems(pod_spec: Mapping[str, Any]) -> list[str]:
    pod = camel(pod_spec)
    problems = baseline_problems(pod)
    problems += [
        f"volume {v.get('name')} is of a type restricted does not allow"
        for v in pod.get("volumes") or []
        if not set(v) - {"name"} <= RESTRICTED_VOLUMES
    ]
    pod_context = pod.get("securityContext") or {}
    for c in _containers(pod):
        context, name = c.get("securityContext") or {}, c.get("name")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"container {name} does not set allowPrivilegeEscalation false")
        if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot")):
            problems.append(f"container {name} does not set runAsNonRoot true")
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            problems.append(f"container {name} runs as user 0")
        seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append(f"container {name} sets no RuntimeDefault or Localhost seccomp profile")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            problems.append(f"container {name} does not drop ALL capabilities")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            problems.append(f"container {name} adds capabilities besides NET_BIND_SERVICE")
    return problems


def level(pod_spec: Mapping[str, Any]) -> str:
    """The strictest level the pod meets."""
    if not restricted_problems(pod_spec):
        return RESTRICTED
    return BASELINE if not baseline_problems(pod_spec) else PRIVILEGED


def strictest_for(pod_specs: Iterable[Mapping[str, Any]]) -> str:
    """The strictest level every pod meets (a namespace enforces one level for all its pods)."""
    levels = [level(p) for p in pod_specs]
    return max(levels, key=LEVELS.index, default=RESTRICTED)


def meets(pod_spec: Mapping[str, Any], wanted: str) -> list[str]:
    """Why the pod fails `wanted` ([] when it passes)."""
    if wanted == RESTRICTED:
        return restricted_problems(pod_spec)
    return baseline_problems(pod_spec) if wanted == BASELINE else []


def labels(enforce: str) -> dict[str, str]:
    """Enforce `enforce`; warn and audit at restricted, so what keeps a namespace below it shows on every apply."""
    return {f"{LABEL}enforce": enforce, f"{LABEL}warn": RESTRICTED, f"{LABEL}audit": RESTRICTED}


__all__ = [
    "BASELINE",
    "LABEL",
    "LEVELS",
    "PRIVILEGED",
    "RESTRICTED",
    "baseline_problems",
    "camel",
    "labels",
    "level",
    "meets",
    "restricted_problems",
    "strictest_for",
]
