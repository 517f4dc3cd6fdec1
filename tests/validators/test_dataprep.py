"""Planted faults in a dataprep spec: writing into the raw corpus, a GPU stage on the CPU-only Slurm engine."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import build_plan
from gpuinfra.spec import DataprepSpec, read_org
from gpuinfra.validators.dataprep import dataprep_gpu_stage_needs_ray, dataprep_writes_outside_the_corpus

ROOT = Path(__file__).resolve().parents[2]
RAW = yaml.safe_load((ROOT / "stacks" / "Pulumi.corpus-prep.yaml").read_text())


def spec_plan(**over: Any) -> tuple[Any, Any]:
    data = copy.deepcopy(RAW["config"]["gpuinfra:dataprep"]) | over
    spec = DataprepSpec.model_validate(data)
    return spec, build_plan(spec, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())


def test_the_example_passes() -> None:
    spec, plan = spec_plan()
    assert not list(dataprep_writes_outside_the_corpus(spec, plan))
    assert not list(dataprep_gpu_stage_needs_ray(spec, plan))


def test_writing_into_the_raw_corpus_is_refused() -> None:
    corpus = RAW["config"]["gpuinfra:dataprep"]["corpus"]["uri"]
    spec, plan = spec_plan(scratch={"uri": corpus + "tmp/"})
    found = list(dataprep_writes_outside_the_corpus(spec, plan))
    assert [f.path for f in found] == [("scratch", "uri")]


def test_a_gpu_stage_on_slurm_is_refused() -> None:
    stages = RAW["config"]["gpuinfra:dataprep"]["stages"] | {"dedup": {"accelerator": "gpu"}}
    spec, plan = spec_plan(stages=stages)
    assert [f.path for f in dataprep_gpu_stage_needs_ray(spec, plan)] == [("stages", "dedup", "accelerator")]


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
