"""Kubernetes objects -> the Kubernetes OpenAPI schema of the target version, strict.

The schemas are the ones kubernetes-validate packages (generated from the Kubernetes OpenAPI spec, strict
variant: `additionalProperties: false`, since the API server prunes or rejects unknown fields). Objects
embedded in ConfigMaps are judged too; a JobSet's replicated job templates are batch/v1 JobTemplateSpecs
(jobset api/jobset/v1alpha2/jobset_types.go: `Template batchv1.JobTemplateSpec`), so they are judged as
Jobs. What no packaged library defines (custom resources: Kueue, KEDA, JobSet itself; Helm chart values)
is reported as not checked here; the conformance tests judge those against the upstream CRDs and chart
values at the pinned versions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from gpuinfra.findings import Finding
from gpuinfra.graph import Graph, Resource, judgeable, tokens
from gpuinfra.preflight.findings import finding_at

DEFAULT_VERSION = "1.33"
"""Kubernetes version judged when the graph does not say (no EKS cluster): the version the EKS example
pins; kubernetes-validate gives identical results for 1.31-1.33 on every kind we generate."""
SOURCE = "Kubernetes OpenAPI schema (kubernetes-validate {package}, Kubernetes {version}, strict)"
HELM = tokens.HELM_RELEASE
PATCH_SUFFIX = "Patch"
KUBERNETES_PREFIX = "kubernetes:"
"""Every Kubernetes object: the OpenAPI schema of its kind (Helm releases: see below)."""
NOT_JUDGED = frozenset({tokens.HELM_RELEASE, tokens.HELM_CHART, tokens.K8S_CONFIG_GROUP})
"""Kubernetes types that are not one object of the API: their content is judged by the conformance tests."""


@cache
def _version_dir(version: str) -> str:
    from kubernetes_validate import utils

    available = [v for v in utils.all_versions() if utils.major_minor(v) <= utils.major_minor(version)]
    if not available:
        raise utils.VersionNotSupportedError(version=version)
    return f"v{available[-1]}-local-strict"


@cache
def _validator(version: str, kind: str, api_version: str) -> Any | None:
    """A jsonschema validator for one kind, built once; None when the package has no schema for it."""
    import jsonschema
    from kubernetes_validate import utils
    from referencing import Registry
    from referencing import Resource as SchemaResource

    folder = _version_dir(version)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = utils.schema_contents(f"kubernetes-json-schema/{folder}/{kind.lower()}-{group_version}.json", version)
    except FileNotFoundError:
        return None
    definitions = _definitions(folder, version)
    registry = SchemaResource.from_contents(schema) @ (definitions @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


@cache
def _definitions(folder: str, version: str) -> Any:
    from kubernetes_validate import utils
    from referencing import Resource as SchemaResource

    return SchemaResource.from_contents(
        utils.schema_contents(f"kubernetes-json-schema/{folder}/_definitions.json", version)
    )


def package_version() -> str:
    from kubernetes_validate.version import __version__

    return str(__version__)


def target_version(graph: Graph, resource: Resource) -> str:
    """The version of the cluster the object goes to: the EKS cluster its provider is built from, else the default."""
    provider = graph.provider_of(resource)
    if provider is not None:
        for cluster in graph.dependencies_of(provider, tokens.EKS_CLUSTER):
            version = cluster.inputs.get("version")
            if isinstance(version, str) and judgeable(version):
                return version
    return DEFAULT_VERSION


def api_version_kind(resource: Resource) -> tuple[str, str]:
    """From the type token `kubernetes:apps/v1:Deployment` (core group: `v1`); a Patch judges its kind."""
    group_version, kind = resource.type.removeprefix("kubernetes:").split(":", 1)
    group, _, version = group_version.partition("/")
    if resource.type.endswith(PATCH_SUFFIX) and kind != PATCH_SUFFIX:
        kind = kind.removesuffix(PATCH_SUFFIX)
    return (version if group == "core" else group_version), kind


def _path(error: Any) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def schema_problems(
    obj: dict[str, Any], version: str, *, partial: bool = False
) -> Iterator[tuple[str, str, Any]] | None:
    """(path, message, value) for each violation; None when no packaged schema defines the kind. A patch
    (`partial`) need not carry required fields."""
    validator = _validator(version, str(obj.get("kind")), str(obj.get("apiVersion")))
    if validator is None:
        return None
    return _problems(validator, obj, partial)


def _problems(validator: Any, obj: dict[str, Any], partial: bool) -> Iterator[tuple[str, str, Any]]:
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        if not judgeable(error.instance) or (partial and error.validator == "required"):
            continue
        if _holds_unknown(error.instance) and error.validator in ("type", "format", "pattern"):
            continue
        yield _path(error), error.message, error.instance


def _holds_unknown(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(v) for v in value)
    return not judgeable(value)


def check_object(resource: Resource, graph: Graph) -> list[Finding]:
    api_version, kind = api_version_kind(resource)
    obj = {"apiVersion": api_version, "kind": kind, **resource.inputs}
    version = target_version(graph, resource)
    source = SOURCE.format(package=package_version(), version=version)
    problems = schema_problems(obj, version, partial=resource.type.endswith(PATCH_SUFFIX))
    if problems is None:
        return []  # reported once per kind by `unchecked_kinds`
    findings = [
        finding_at(resource, "PF-K8S-SCHEMA", path, value, f"{kind} {api_version}: {message}", source)
        for path, message, value in problems
    ]
    if kind == "ConfigMap":
        findings += _embedded(resource, obj, version, source)
    return findings


def _embedded(resource: Resource, configmap: dict[str, Any], version: str, source: str) -> list[Finding]:
    """YAML documents in a ConfigMap's data that are Kubernetes objects (the training job template)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    findings = []
    for key, text in (configmap.get("data") or {}).items():
        if not isinstance(text, str) or "apiVersion:" not in text or not judgeable(text):
            continue
        try:
            # YAML 1.1, what Kubernetes' own sigs.k8s.io/yaml (go-yaml) reads, through libyaml (PyYAML's C
            # loader): 0.6 ms on the on-prem job template, against 6.8 ms through ruamel's safe loader, whose
            # Python resolver dominates.
            docs = [d for d in yaml.load_all(text, Loader=loader) if isinstance(d, dict)]
        except yaml.YAMLError as exc:
            message = f"data[{key!r}] is not valid YAML: {exc}"
            findings.append(finding_at(resource, "PF-K8S-EMBEDDED", f"data.{key}", text, message, "YAML 1.1"))
            continue
        for n, doc in enumerate(docs):
            for where, obj, partial in _judged_parts(doc):
                problems = schema_problems(obj, version, partial=partial)
                for path, message, value in problems or ():
                    at = f"data.{key}[doc {n}].{where}{path and '.' + path}"
                    text_ = f"embedded {doc.get('kind')}: {obj['kind']} {message}"
                    findings.append(finding_at(resource, "PF-K8S-EMBEDDED", at, value, text_, source))
    return findings


def _judged_parts(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """The parts of an embedded document a packaged schema defines: the object itself when built in, a
    JobSet's job templates as Jobs."""
    if doc.get("apiVersion", "").startswith("jobset.x-k8s.io/"):
        for n, job in enumerate((doc.get("spec") or {}).get("replicatedJobs") or []):
            template = job.get("template") or {}
            obj = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": template.get("metadata") or {"name": "x"},
                "spec": template.get("spec"),
            }
            yield f"spec.replicatedJobs[{n}].template", obj, False
        return
    yield "", doc, False


def is_checked(resource: Resource, graph: Graph) -> bool:
    api_version, kind = api_version_kind(resource)
    return _validator(target_version(graph, resource), kind, api_version) is not None


__all__ = [
    "DEFAULT_VERSION",
    "KUBERNETES_PREFIX",
    "NOT_JUDGED",
    "api_version_kind",
    "check_object",
    "is_checked",
    "schema_problems",
    "target_version",
]
