"""The Ray engine's RayJob and the operator's chart values against KubeRay v1.7.0 (../shared/upstream: the CRDs and
values.yaml at the tag), and a planted fault the CRD refuses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import DataprepPlan, build_plan
from gpuinfra.pulumi.components.dataprep.rayjob import operator_values, ray_job
from gpuinfra.spec import DataprepSpec, read_org
from preflight.upstream import UPSTREAM, crd_schema, require

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/datatrove-ray@sha256:" + "ab" * 32


def ray_spec() -> tuple[DataprepSpec, DataprepPlan]:
    raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.corpus-prep.yaml").read_text())
    data = copy.deepcopy(raw["config"]["gpuinfra:dataprep"])
    data.pop("image_id")
    data["engine"] = "datatrove-ray"
    data["ray"] = {
        "kubeconfig_key": "gpuinfra:kube-prep",
        "image": IMAGE,
        "oidc_provider_arn": "arn:aws:iam::555555555555:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/PREP",
    }
    spec = DataprepSpec.model_validate(data)
    plan = build_plan(spec, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())
    assert isinstance(plan, DataprepPlan)
    return spec, plan


def validate(manifest: dict[str, Any]) -> None:
    schema = crd_schema("ray.io", "v1", manifest["kind"])
    jsonschema.validate(manifest, schema, cls=jsonschema.Draft7Validator)


def test_rayjob_validates_against_the_crd() -> None:
    spec, plan = ray_spec()
    job = ray_job(spec, plan, memory_gib=32)
    validate(job)
    cluster = job["spec"]["rayClusterSpec"]
    workers = cluster["workerGroupSpecs"][0]
    assert workers["maxReplicas"] == plan.nodes and workers["minReplicas"] == 0
    # m7i.2xlarge: 8 vCPU, 32 GiB -> 7 CPUs and 28 GiB a worker pod
    limits = workers["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": "7", "memory": "28Gi"}
    assert job["spec"]["activeDeadlineSeconds"] == 720 * 3600
    assert job["spec"]["shutdownAfterJobFinishes"] is True


def test_the_raycluster_inside_validates_as_a_raycluster() -> None:
    spec, plan = ray_spec()
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": spec.name},
        "spec": ray_job(spec, plan, 32)["spec"]["rayClusterSpec"],
    }
    validate(cluster)


def test_a_misspelled_field_is_refused_by_the_crd() -> None:
    spec, plan = ray_spec()
    job = ray_job(spec, plan, 32)
    job["spec"]["shutdownAfterJobFinish"] = job["spec"].pop("shutdownAfterJobFinishes")
    with pytest.raises(jsonschema.ValidationError, match="shutdownAfterJobFinish"):
        validate(job)


def test_operator_values_are_the_charts_own_keys() -> None:
    values = yaml.safe_load(require(UPSTREAM / "k8s" / "kuberay-v1.7.0" / "values.yaml").read_text())
    text = (UPSTREAM / "k8s" / "kuberay-v1.7.0" / "values.yaml").read_text()
    for key in operator_values("dataprep"):
        assert key in values or f"# {key}:" in text, key  # watchNamespace is documented commented out
