"""The rendered datatrove program's stages for each dedup choice, read by running the program's own builders
(datatrove imported, nothing executed): datatrove's MinHash stages with PII in their filter; none, with PII before
tokenizing (no stage replaced it before); NeMo Curator's (the GPU stage runs between filter and tokenize, so the
program has only those two, tokenize reading what Curator's removal kept)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.pulumi.components.dataprep.pipeline import CURATOR_OUT, Where, render_pipeline
from gpuinfra.spec import DataprepSpec, read_stack

ROOT = Path(__file__).resolve().parents[2]


def program(tmp_path: Path, **dedup: Any) -> dict[str, Any]:
    doc = read_stack(ROOT / "stacks" / "Pulumi.corpus-prep.yaml")
    spec = doc.spec
    assert isinstance(spec, DataprepSpec)
    stages = spec.stages
    if dedup.get("off"):
        stages = stages.model_copy(update={"dedup": None})
    elif dedup:
        assert stages.dedup is not None
        stages = stages.model_copy(update={"dedup": stages.dedup.model_copy(update=dedup)})
    # JSONL in (as the local run reads the sample): no WARC reader or extractor to import
    stages = stages.model_copy(update={"extract": None})
    corpus = spec.corpus.model_copy(update={"format": "jsonl"})
    spec = spec.model_copy(update={"stages": stages, "corpus": corpus})
    where = Where(input=f"{tmp_path}/in/", scratch=f"{tmp_path}/scratch/", output=f"{tmp_path}/out/",
                  work=f"{tmp_path}/work/", files=2)  # fmt: skip
    path = tmp_path / "pipeline.py"
    path.write_text(render_pipeline(spec, where))
    return runpy.run_path(str(path), run_name="not_main")


def names(steps: list[Any]) -> list[str]:
    return [type(s).__name__ for s in steps]


def test_cpu_dedup_replaces_pii_in_its_filter_stage(tmp_path: Path) -> None:
    stages = dict(program(tmp_path)["stages"]())
    assert list(stages) == ["filter", "minhash-signatures", "minhash-buckets", "minhash-cluster", "minhash-filter",
                            "tokenize"]  # fmt: skip
    assert "PIIFormatter" in names(stages["minhash-filter"])
    assert "PIIFormatter" not in names(stages["tokenize"])


def test_without_dedup_pii_is_replaced_before_tokenizing(tmp_path: Path) -> None:
    stages = dict(program(tmp_path, off=True)["stages"]())
    assert list(stages) == ["filter", "tokenize"]
    assert names(stages["tokenize"])[1:] == ["PIIFormatter", "DocumentTokenizer"]


def test_gpu_dedup_leaves_filter_and_tokenize_to_datatrove(tmp_path: Path) -> None:
    module = program(tmp_path, accelerator="gpu")
    stages = dict(module["stages"]())
    assert list(stages) == ["filter", "tokenize"]
    reader, *rest = stages["tokenize"]
    assert names(rest) == ["PIIFormatter", "DocumentTokenizer"]
    assert reader.data_folder.path.rstrip("/") == f"{tmp_path}/scratch/{CURATOR_OUT}".rstrip("/")


def test_an_unknown_stage_name_is_refused_by_name(tmp_path: Path) -> None:
    module = program(tmp_path)
    with pytest.raises(SystemExit, match="no stage minhash: the stages are filter, minhash-signatures"):
        module["main"]("local", ("minhash",))
