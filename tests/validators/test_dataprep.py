"""Planted faults in a dataprep spec: writing into the raw corpus, a GPU stage on the CPU-only Slurm engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DELETE, Case, run_case

ROOT = Path(__file__).resolve().parents[2]
CORPUS = "s3://commoncrawl/crawl-data/CC-MAIN-2024-51/"
GPU = {
    "stages.dedup.accelerator": "gpu",
    "ray.curator_image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/curator@sha256:" + "cd" * 32,
}
RAY = {
    "engine": "datatrove-ray",
    "image_id": DELETE,
    "ray": {
        "kubeconfig_key": "gpuinfra:kube-prep",
        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/ray@sha256:" + "ab" * 32,
        "oidc_provider_arn": "arn:aws:iam::555555555555:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/PREP",
        "karpenter": {"version": "1.14.1", "node_role": "prep-node", "discovery_tag": "prep-us-east-1"},
    },
}

CASES = [
    Case("dataprep-writes-outside-the-corpus", "corpus-prep", fires=False),
    Case(
        "dataprep-writes-outside-the-corpus",
        "corpus-prep",
        {"scratch.uri": CORPUS + "tmp/"},
        message=r"scratch.uri .* overlaps the raw corpus",
    ),
    Case("dataprep-gpu-stage-needs-ray", "corpus-prep", fires=False),
    Case(
        "dataprep-gpu-stage-needs-ray",
        "corpus-prep",
        {"stages.dedup.accelerator": "gpu"},
        message=r"runs on the Ray engine",
    ),
    Case("dataprep-ray-cluster-registered", "corpus-prep", RAY, fires=False),
    Case("dataprep-karpenter-verified", "corpus-prep", RAY, fires=False),
    Case(
        "dataprep-ray-cluster-registered",
        "corpus-prep",
        {**RAY, "ray.kubeconfig_key": "gpuinfra:kube-elsewhere"},
        message=r"gpuinfra:kube-elsewhere is no cluster the organization file registers",
    ),
    Case(
        "dataprep-ray-cluster-registered",
        "corpus-prep",
        {**RAY, "ray.kubeconfig_key": "gpuinfra:kube-us-east-1"},
        message=r"reaches cluster serve-us-east-1, an inference cluster",
    ),
    Case(
        "dataprep-gpu-stage-not-allowed",
        "corpus-prep",
        {**RAY, **GPU},
        {"accounts.corpus-prep.allow_accelerators": True},
        fires=False,
    ),
    Case(
        "dataprep-gpu-stage-not-allowed",
        "corpus-prep",
        {**RAY, **GPU},
        message=r"launches 3 x p5.48xlarge in account corpus-prep, which is not allowed GPUs",
    ),
    Case(
        "dataprep-karpenter-verified",
        "corpus-prep",
        {**RAY, "ray.karpenter.version": "1.5.0"},
        message=r"Karpenter 1.5.0 is older than 1.14.1",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)


def test_a_reader_that_is_not_a_training_account_is_refused_with_its_line(tmp_path: Path) -> None:
    """Only training reads the tokens: an inference account among output.readers is refused where it is written."""
    from gpuinfra.errors import InputError
    from gpuinfra.load import load_inputs

    text = (ROOT / "stacks" / "Pulumi.corpus-prep.yaml").read_text()
    bad = tmp_path / "Pulumi.corpus-prep.yaml"
    bad.write_text(
        text.replace("readers: [ml-training]", "readers: [ml-inference]").replace("m7i.2xlarge", "m7i.2xlarg")
    )
    try:
        load_inputs(bad, ROOT / "stacks" / "org.yaml")
    except InputError as exc:
        rendered = exc.render()
    else:
        raise AssertionError("accepted")
    line = next(n for n, t in enumerate(bad.read_text().splitlines(), 1) if "readers:" in t)
    assert f"{bad}:{line}:" in rendered and "'ml-inference' is not a training account" in rendered
    assert "unknown instance type 'm7i.2xlarg'" in rendered and "did you mean 'm7i.2xlarge'" in rendered
