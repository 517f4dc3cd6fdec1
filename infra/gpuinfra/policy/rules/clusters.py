"""Separation on Kubernetes: a stack deploys only into clusters of its own purpose, as whom its purpose allows.

A kubeconfig is a secret in the stack's config, so the cluster it reaches cannot be read off the stack. The
organization file registers every cluster with its purpose, its account and the config key its kubeconfig is
kept under (and, optionally, its API server URL). Then:

- every kubeconfig key the spec uses (inference `kubernetes.kubeconfig_keys`, on-premises training
  `onprem.kubeconfig_key`) must be a registered cluster's of the stack's purpose;
- a Kubernetes provider whose kubeconfig the pack can read (under the Pulumi CLI, secrets reach the pack in
  plain text; in-process preview blinds them) must point at a registered server of the stack's purpose or at
  a cluster the stack creates itself, and any role its `aws eks get-token --role-arn` or AWS_ROLE_ARN assumes
  must be in an account of the stack's purpose;
- a role pods assume (IRSA's `eks.amazonaws.com/role-arn` annotation on a ServiceAccount, an EKS Pod Identity
  association's roleArn: Amazon EKS User Guide, "IAM roles for service accounts" and "EKS Pod Identities")
  must be in an account of the stack's purpose.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ssl
from collections.abc import Iterator, Mapping
from itertools import pairwise
from typing import Any

from pulumi_policy import StackValidationArgs
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuinfra.graph import SECRET, tokens
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.paths import account_problem
from gpuinfra.policy.rules.values import get, listed, view
from gpuinfra.spec import PURPOSE_OF_WORKLOAD, with_article
from gpuinfra.spec.yamlfast import deeper_than

K8S_PROVIDER = "pulumi:providers:kubernetes"
KUBECONFIG_DEPTH = 64
"""A kubeconfig nests a handful of levels. One deeper is refused unread: ruamel's C loader composes recursively in C
(100,000 levels overflowed the C stack and crashed the pack), and one the pack skipped would pass unchecked."""
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"


@stack_policy(
    "separation-kubernetes",
    "A stack reaches only Kubernetes clusters the organization file registers for its purpose (by kubeconfig key "
    "and API server), and its kubeconfigs and pods assume roles only in accounts of its purpose.",
    MANDATORY,
)
def kubernetes(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    for key_problem in key_problems(facts):
        report_violation(key_problem)
    stack = view(args)
    own_clusters = stack.of_type(tokens.EKS_CLUSTER)
    for provider in stack.of_type(K8S_PROVIDER):
        created_here = any(d in own_clusters for d in provider.dependencies)
        for kubeconfig_problem in kubeconfig_problems(facts, get(provider.props, "kubeconfig"), created_here):
            report_violation(f"{provider.name}: {kubeconfig_problem}", provider.urn)
    for account in stack.of_type(SERVICE_ACCOUNT):
        role = get(account.props, "metadata", "annotations", IRSA_ANNOTATION)
        problem = _role_problem(facts, role) if role else None
        if problem:
            report_violation(f"{account.name}: its pods {problem}", account.urn)
    for association in stack.of_type(POD_IDENTITY):
        problem = _role_problem(facts, get(association.props, "roleArn"))
        if problem:
            report_violation(f"{association.name}: its pods {problem}", association.urn)


def _used_keys(facts: StackFacts) -> list[tuple[str, str]]:
    """(where in the spec, config key) of every kubeconfig the spec uses."""
    kubernetes = getattr(facts.spec, "kubernetes", None)
    out = [
        (f"kubernetes.kubeconfig_keys.{r}", k) for r, k in (kubernetes.kubeconfig_keys if kubernetes else {}).items()
    ]
    onprem = getattr(facts.spec, "onprem", None)
    if onprem is not None:
        out.append(("onprem.kubeconfig_key", onprem.kubeconfig_key))
    kueue = getattr(facts.spec, "kueue", None)
    if kueue is not None:
        out.append(("kueue.kubeconfig_key", kueue.kubeconfig_key))
    ray = getattr(facts.spec, "ray", None)
    if ray is not None:
        out.append(("ray.kubeconfig_key", ray.kubeconfig_key))
    return out


def key_problems(facts: StackFacts) -> list[str]:
    registered = {c.kubeconfig_key: (name, c) for name, c in facts.org.clusters.items()}
    problems = []
    for where, key in _used_keys(facts):
        found = registered.get(key)
        if found is None:
            problems.append(
                f"{where} reads the kubeconfig under {key!r}, which is no cluster the organization file registers; "
                f"register the cluster under clusters: with purpose {facts.workload} and kubeconfig_key {key}"
            )
        elif found[1].purpose != PURPOSE_OF_WORKLOAD.get(facts.workload, facts.workload):
            problems.append(
                f"{where} reads the kubeconfig of cluster {found[0]} ({key!r}), {with_article(found[1].purpose)} "
                f"cluster, but {facts.stack} is {with_article(facts.workload)} stack: training and inference never "
                "share a cluster"
            )
    return problems


def kubeconfig_problems(facts: StackFacts, kubeconfig: Any, created_here: bool) -> list[str]:
    """Why a kubeconfig the pack can read reaches outside the stack's purpose ([] when fine or unreadable). Each of
    its clusters is identified by its `server:` or its CA (`certificate-authority-data`, by fingerprint): either
    naming another purpose's registered cluster is refused, so a new URL for the training cluster is caught."""
    if isinstance(kubeconfig, str) and deeper_than(kubeconfig, KUBECONFIG_DEPTH):  # fails closed, never crashes
        return [f"its kubeconfig nests deeper than {KUBECONFIG_DEPTH} levels, which the pack does not read"]
    document = _parsed(kubeconfig)
    if document is None:
        return []
    problems = []
    for server, ca in _endpoints(document):
        found = _identified(facts, server, ca)
        if not found and not created_here:
            problems.append(f"its kubeconfig points at {server}, which is no cluster the organization file registers")
        for name, cluster, by in found:
            if cluster.purpose != facts.workload:
                problems.append(
                    f"its kubeconfig points at cluster {name} ({by}), {with_article(cluster.purpose)} cluster"
                )
    for role in _roles(document):
        problem = _role_problem(facts, role)
        if problem:
            problems.append(f"the credentials in its kubeconfig {problem}")
    return problems


def _identified(facts: StackFacts, server: str, ca: str | None) -> list[tuple[str, Any, str]]:
    """Registered clusters a kubeconfig entry names: by server URL, or by its CA certificate's fingerprint."""
    out = []
    for name, cluster in facts.org.clusters.items():
        if cluster.server and cluster.server == server:
            out.append((name, cluster, server))
        elif ca and cluster.ca_sha256 and _hex(cluster.ca_sha256) == ca:
            out.append((name, cluster, f"its CA, fingerprint {ca[:16]}..., at {server}"))
    return out


def _hex(fingerprint: str) -> str:
    return fingerprint.replace(":", "").lower()


def _endpoints(document: Mapping[str, Any]) -> Iterator[tuple[str, str | None]]:
    """(server, CA fingerprint or None) of each cluster entry of a kubeconfig."""
    for entry in listed(document.get("clusters")):
        server = get(entry, "cluster", "server")
        if server:
            yield str(server), ca_fingerprint(get(entry, "cluster", "certificate-authority-data"))


def ca_fingerprint(data: Any) -> str | None:
    """SHA-256 of the DER certificate in a kubeconfig's `certificate-authority-data` (base64 of a PEM); None when
    absent or unreadable (then only the server identifies the cluster)."""
    if not isinstance(data, str) or not data:
        return None
    try:
        pem = base64.b64decode(data, validate=True).decode("ascii")
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return None


def _parsed(kubeconfig: Any) -> Mapping[str, Any] | None:
    if isinstance(kubeconfig, Mapping):
        return kubeconfig
    if not isinstance(kubeconfig, str) or not kubeconfig or kubeconfig == SECRET:
        return None
    try:
        document = YAML(typ="safe").load(kubeconfig)
    except YAMLError:
        return None
    return document if isinstance(document, Mapping) else None


def _roles(document: Mapping[str, Any]) -> Iterator[str]:
    """Roles a kubeconfig's exec credential plugin assumes: `--role-arn X` / `-r X` arguments (aws eks get-token,
    aws-iam-authenticator) and an AWS_ROLE_ARN environment variable."""
    for entry in listed(document.get("users")):
        plugin = get(entry, "user", "exec") or {}
        arguments = [str(a) for a in listed(get(plugin, "args"))]
        for flag, value in pairwise(arguments):
            if flag in ("--role-arn", "--role", "-r"):
                yield value
        for variable in listed(get(plugin, "env")):
            if get(variable, "name") == "AWS_ROLE_ARN" and get(variable, "value"):
                yield str(get(variable, "value"))


def _role_problem(facts: StackFacts, role: Any) -> str | None:
    return account_problem(facts, str(role), f"assume role {role} in")


__all__ = ["ca_fingerprint", "key_problems", "kubeconfig_problems", "kubernetes"]
