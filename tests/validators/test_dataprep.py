"""Planted faults in a dataprep spec: writing into the raw corpus, a GPU stage on the CPU-only Slurm engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import Case, run_case

ROOT = Path(__file__).resolve().parents[2]
CORPUS = "s3://commoncrawl/crawl-data/CC-MAIN-2024-51/"

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
