"""Upstream facts for the conformance tests: CRD schemas, chart values and per-type network cards at the
pinned versions, read from ../shared/upstream (see its SOURCES.md). Tests only: production preflight never
reads ../shared. Absent in CI -> the test fails; absent elsewhere -> it skips."""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "upstream"
# Which upstream file judges which custom resource (the pins the generators use; see SOURCES.md).
CRDS = {
    "kueue.x-k8s.io": ("k8s/kueue-v0.19.2", "kueue.x-k8s.io_{plural}.yaml"),
    "keda.sh": ("k8s/keda-v2.17.2", "keda.sh_{plural}.yaml"),
    "jobset.x-k8s.io": ("k8s/jobset-v0.12.0", "jobset.x-k8s.io_{plural}.yaml"),
    "ray.io": ("k8s/kuberay-v1.7.0", "ray.io_{plural}.yaml"),
    "karpenter.sh": ("k8s/karpenter-v1.14.1", "karpenter.sh_{plural}.yaml"),
    "karpenter.k8s.aws": ("k8s/karpenter-v1.14.1", "karpenter.k8s.aws_{plural}.yaml"),
}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
LOCAL_CRDS = {"kueue.x-k8s.io": "kueue-v0.19.2", "networking.gke.io": "gke-networking-api-34c617f"}
"""CRDs of the pinned releases that ../shared/upstream does not hold (Kueue's AdmissionCheck and
ProvisioningRequestConfig, GKE's networking API), kept verbatim under tests/fixtures/upstream (its SOURCES.md)."""
CRD_GROUPS = frozenset(CRDS) | frozenset(LOCAL_CRDS)


def local_crds(group: str) -> list[Path]:
    """The fixture CRD files of an API group (none for most)."""
    folder = LOCAL_CRDS.get(group)
    return sorted((FIXTURES / folder).glob(f"{group}_*.yaml")) if folder else []


def require(path: Path) -> Path:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: the conformance tests need ../shared/upstream in CI")
        pytest.skip(f"{path} not present (outside CI)")
    return path


def _load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(require(path).read_text())


def strict(schema: Any) -> Any:
    """A CRD's structural schema as the API server applies it: unknown fields are pruned (an error here),
    unless the schema preserves them."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items()}
        pattern = out.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            # Go's regexp takes a flag group anywhere (Kueue's AdmissionCheck kind pattern); Python's only first.
            out["pattern"] = "(?i)^" + pattern.removeprefix("^(?i)")
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@cache
def crd_schema(group: str, version: str, kind: str) -> Any:
    shared = []
    if group in CRDS:
        folder, pattern = CRDS[group]
        shared = sorted(require(UPSTREAM / folder).glob(pattern.format(plural="*")))
    for path in shared + local_crds(group):
        crd = _load(path)
        if crd["spec"]["names"]["kind"] != kind:
            continue
        for v in crd["spec"]["versions"]:
            if v["name"] == version:
                return strict(v["schema"]["openAPIV3Schema"])
    raise LookupError(f"no CRD for {group}/{version} {kind} in ../shared/upstream or {FIXTURES}")


def crd_errors(resource: Any) -> list[str]:
    """Every way a graph's custom resource (type `kubernetes:<group>/<version>:<Kind>`) breaks its CRD at the pin."""
    import jsonschema

    group_version, kind = resource.type.removeprefix("kubernetes:").split(":")
    group, version = group_version.split("/")
    obj = {"apiVersion": group_version, "kind": kind, **resource.inputs}
    validator = jsonschema.Draft7Validator(crd_schema(group, version, kind))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


@cache
def charts() -> list[dict[str, Any]]:
    return json.loads(require(UPSTREAM / "k8s" / "helm" / "charts.json").read_text())["charts"]


OPERATOR_CHARTS = {("kuberay-operator", "1.7.0"): "kuberay-v1.7.0"}
"""Charts kept beside their CRDs rather than in helm/charts.json: (chart, version) -> folder of its values.yaml
(kuberay-v1.7.0/SOURCE.md: helm-chart/kuberay-operator/values.yaml at the tag)."""


def chart_values(chart: str, version: str) -> Any:
    if (chart, version) in OPERATOR_CHARTS:
        path = UPSTREAM / "k8s" / OPERATOR_CHARTS[chart, version] / "values.yaml"
        values = _load(path)
        # top-level keys the chart documents commented out (`# watchNamespace:`): its templates read them
        documented = re.findall(r"^# ([A-Za-z][A-Za-z0-9]*):[ \t]*\n#[ \t]+- ", path.read_text(), flags=re.M)
        return {**{key: {} for key in documented}, **values}
    for entry in charts():
        if entry["chart"] == chart and version in entry["versions"]:
            return _load(UPSTREAM / "k8s" / entry["versions"][version] / "values.yaml")
    raise LookupError(f"chart {chart} {version} is not among the verified upstream charts")


def unknown_values(values: Any, defaults: Any, at: str = "") -> list[str]:
    """Value paths the chart does not define (Helm renders nothing from them): keys absent from a non-empty
    defaults map. An empty map or a list in the defaults is free-form."""
    if not isinstance(values, dict) or not isinstance(defaults, dict) or not defaults:
        return []
    out = []
    for key, value in values.items():
        here = f"{at}.{key}" if at else key
        if key not in defaults:
            out.append(here)
        else:
            out += unknown_values(value, defaults[key], here)
    return out


@cache
def network_cards() -> dict[str, Any]:
    return dict(json.loads(require(UPSTREAM / "aws" / "netcards.json").read_text()))


__all__ = [
    "CRDS",
    "CRD_GROUPS",
    "chart_values",
    "crd_errors",
    "crd_schema",
    "local_crds",
    "network_cards",
    "require",
    "strict",
    "unknown_values",
]
