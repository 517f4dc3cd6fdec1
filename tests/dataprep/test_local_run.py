"""The example's pipeline, rendered and run with datatrove's LocalPipelineExecutor on the shipped sample (planted
exact and near duplicates, German and French pages): the foreign pages are gone, no duplicate pair survives, and
the token shards decode with the declared tokenizer back to exactly the surviving documents, in the token count the
shards' metadata states."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gpuinfra.commands.dataprep import LocalRun, run_local, sample_folder

ROOT = Path(__file__).resolve().parents[2]
EOS = "<|endoftext|>"


def read_jsonl(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl*")) for line in gzip.open(f, "rt")]


def train_tokenizer(texts: list[str], path: Path) -> None:
    """A small byte-level BPE trained on the sample: no pretrained tokenizer can be fetched offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=800, special_tokens=[EOS], initial_alphabet=alphabet))
    tok.save(str(path))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalRun, Path]:
    tmp = tmp_path_factory.mktemp("dataprep")
    tokenizer = tmp / "tokenizer.json"
    train_tokenizer([d["text"] for d in read_jsonl(sample_folder())], tokenizer)
    stack = (ROOT / "stacks" / "Pulumi.corpus-prep.yaml").read_text()
    assert "tokenizer: gpt2" in stack
    declared = tmp / "Pulumi.corpus-prep.yaml"
    declared.write_text(stack.replace("tokenizer: gpt2", f"tokenizer: {tokenizer}"))  # the declared tokenizer
    done = run_local(str(declared), tmp / "out")
    assert done.returncode == 0, done.log[-4000:]
    return done, tokenizer


def test_foreign_pages_are_filtered(run: tuple[LocalRun, Path]) -> None:
    done, _ = run
    sample = Counter(d["metadata"]["planted"] for d in read_jsonl(sample_folder()))
    assert sample["german"] == 15 and sample["french"] == 15
    kept = Counter(d["metadata"]["planted"] for d in read_jsonl(done.tokens.parent / "scratch" / "filtered"))
    assert kept["german"] == 0 and kept["french"] == 0
    assert kept["english"] >= 0.9 * 240  # the grammar's prose passes the quality filters


def test_no_duplicate_pair_survives(run: tuple[LocalRun, Path]) -> None:
    done, _ = run
    filtered = {d["id"]: d for d in read_jsonl(done.tokens.parent / "scratch" / "filtered")}
    deduped = {d["id"] for d in read_jsonl(done.tokens.parent / "scratch" / "deduped")}
    pairs = [
        (i, d["metadata"]["planted"].split(":", 1)[1], d["metadata"]["kind"])
        for i, d in filtered.items()
        if d["metadata"]["planted"].startswith("duplicate-of:")
    ]
    both_in = [(dup, source, kind) for dup, source, kind in pairs if source in filtered]
    assert {kind for *_, kind in both_in} == {"exact", "near"} and len(both_in) >= 25
    for dup, source, _ in both_in:
        assert (dup in deduped) != (source in deduped), (dup, source)  # exactly one of each pair is kept
    assert len(deduped) == len(filtered) - len(both_in)


def test_token_shards_decode_to_the_kept_documents(run: tuple[LocalRun, Path]) -> None:
    from tokenizers import Tokenizer

    done, tokenizer_path = run
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    eos = tokenizer.token_to_id(EOS)
    kept = Counter(d["text"] for d in read_jsonl(done.tokens.parent / "scratch" / "deduped"))
    decoded: Counter[str] = Counter()
    total = 0
    shards = sorted(done.tokens.glob("*.ds"))
    assert shards
    for shard in shards:
        tokens = np.fromfile(shard, dtype=np.uint16)  # vocabulary < 65536: datatrove writes 2-byte tokens
        meta = (shard.parent / f"{shard.name}.metadata").read_text().splitlines()
        assert meta[0] == f"{tokenizer_path}|2" and int(meta[1]) == len(tokens)
        total += len(tokens)
        ends = np.flatnonzero(tokens == eos)
        assert ends[-1] == len(tokens) - 1  # every document ends with EOS
        for start, end in zip(np.r_[0, ends[:-1] + 1], ends, strict=True):
            decoded[tokenizer.decode(tokens[start:end].tolist())] += 1
    assert decoded == kept
    assert total == sum(len(tokenizer.encode(t).ids) * n for t, n in kept.items()) + sum(kept.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("llm-train", "--local"), "not a gpuinfra:dataprep stack"),
        (("corpus-prep",), "only --local runs here"),
        (("corpus-prep", "--local", "--sample", "stacks"), "no JSONL files"),
    ],
)
def test_bad_runs_are_refused_with_exit_2(args: tuple[str, ...], message: str) -> None:
    from helpers import gpuinfra

    done = gpuinfra("dataprep", "run", *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
