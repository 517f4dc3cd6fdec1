"""The Ray engine's RayJobs against KubeRay v1.7.0's CRDs (../shared/upstream: the CRDs at the tag): the RayCluster
inside each validates as a RayCluster, and a planted misspelling is refused (strict: the API server prunes an
unknown field, which here is an error)."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from dataprep.test_ray_stack import rayjobs
from preflight.upstream import crd_schema


def validate(manifest: dict) -> None:  # type: ignore[type-arg]
    jsonschema.validate(manifest, crd_schema("ray.io", "v1", manifest["kind"]), cls=jsonschema.Draft7Validator)


def test_the_raycluster_inside_validates_as_a_raycluster() -> None:
    for job in rayjobs():
        cluster = {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": job["metadata"]["name"]},
            "spec": job["spec"]["rayClusterSpec"],
        }
        validate(cluster)


def test_a_misspelled_field_is_refused_by_the_crd() -> None:
    job = copy.deepcopy(rayjobs()[0])
    validate(job)
    job["spec"]["shutdownAfterJobFinish"] = job["spec"].pop("shutdownAfterJobFinishes")
    with pytest.raises(jsonschema.ValidationError, match="shutdownAfterJobFinish"):
        validate(job)
