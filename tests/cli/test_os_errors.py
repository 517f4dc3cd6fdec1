"""Issue 47: ordinary OS errors are user errors, every read is bounded, output never fails to encode.

Each case runs the real command line (gpuinfra.cli.main) and expects exit 2 naming the path and the reason, never
exit 3 (gpuinfra's own failure) or a hang; the reader's limits are tested at their boundaries (one over refused,
the limit itself read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bad_inputs import run_cli
from gpuinfra.errors import InputError
from gpuinfra.review import cache
from gpuinfra.spec.files import MAX_JSON_DEPTH, loads_json, read_bytes, read_bytes_or_none
from helpers import STACKS

TRAIN = str(STACKS / "Pulumi.llm-train.yaml")
HINT = "give a document"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return lambda *args: run_cli(capsys, monkeypatch, *args)


def user_error(result: tuple[int, str, str], *words: str) -> str:
    code, out, err = result
    assert code == 2, out + err
    assert "Traceback" not in err and "unexpectedly" not in err, err
    for word in words:
        assert word in err, err
    return err


# ---- paths the user names ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [("validate",), ("preview",), ("cost",), ("diff",), ("advise",), ("schema", "--out")],
    ids=["validate", "preview", "cost", "diff", "advise", "schema-out"],
)
def test_a_5000_character_path_is_named_short_with_the_reason(args: tuple[str, ...], cli) -> None:  # type: ignore[no-untyped-def]
    """Each reader and writer names the path, shortened (errors.shortened), and the reason."""
    err = user_error(cli(*args, "a" * 5000), "File name too long", "(5,000 characters)")
    assert len(err) < 600  # the path shortened, not printed whole


@pytest.mark.parametrize("command", ["validate", "preview", "cost"])
def test_a_path_through_a_file_is_named(command: str, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "plain").write_text("x")
    user_error(cli(command, str(tmp_path / "plain" / "Pulumi.x.yaml")), "plain")


def test_init_dir_naming_a_file_is_refused(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "taken").write_text("mine")
    user_error(cli("init", "training-pcs", "x1", "--dir", str(tmp_path / "taken")), "taken", "names a file")
    assert (tmp_path / "taken").read_text() == "mine"


def test_an_unreadable_folder_is_a_user_error(tmp_path: Path) -> None:
    """As an ordinary user (root reads every folder): a stack in a folder without search permission."""
    if os.geteuid() != 0:
        pytest.skip("drops to an unprivileged user, which needs root")
    folder = tmp_path / "locked"
    folder.mkdir()
    stack = str(folder / "Pulumi.x.yaml")
    Path(stack).write_text("config: {}\n")
    folder.chmod(0o000)
    code = "import sys; from gpuinfra.cli import main; sys.argv = ['gpuinfra', 'validate', sys.argv[1]]; main()"
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code, stack],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    folder.chmod(0o755)
    if "Permission denied" in done.stderr and "python" in done.stderr.lower() and done.returncode != 2:
        pytest.skip(f"the unprivileged user cannot run this interpreter: {done.stderr[-200:]}")
    assert done.returncode == 2, done.stderr
    assert "Pulumi.x.yaml" in done.stderr and "Permission denied" in done.stderr
    assert "unexpectedly" not in done.stderr


# ---- output encoding ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "table", "markdown"])
def test_a_lone_surrogate_argument_is_written_escaped(fmt: str) -> None:
    """An undecodable byte in an argument arrives as a lone surrogate (PEP 383); every format writes it escaped."""
    code = "import sys; from gpuinfra.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "validate", os.fsdecode(b"\xed\xa0\x80"), "--format", fmt],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert b"unexpectedly" not in done.stderr
    assert b"\\udced" in done.stdout + done.stderr
    if fmt == "json":
        assert json.loads(done.stdout)["problems"]


# ---- the bounded reader, at its limits -----------------------------------------------------------------------
def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_depth_at_the_limit_is_read_and_one_over_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    assert loads_json(nested(MAX_JSON_DEPTH), path, "the document", HINT) is not None
    with pytest.raises(InputError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        loads_json(nested(MAX_JSON_DEPTH + 1), path, "the document", HINT)


@pytest.mark.parametrize(
    "text",
    [
        '["a", "\\ud800"]',  # in a list (M18 of the code review: only object values were tried)
        '[["\\udfff"]]',
        '{"k": ["x", {"y": "\\udc00"}]}',
        '{"\\ud800": 1}',
    ],
)
def test_a_lone_surrogate_anywhere_is_refused(text: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        loads_json(text, tmp_path / "d.json", "the document", HINT)


def test_a_surrogate_pair_in_a_list_is_read(tmp_path: Path) -> None:
    assert loads_json('["\\ud83d\\ude00"]', tmp_path / "d.json", "the document", HINT) == ["\U0001f600"]


@pytest.mark.parametrize(
    ("text", "value"),
    [("1" + "0" * 30, 10**30), ("1e30", 1e30), ("-1e30", -1e30), ("4.2e23", 4.2e23)],
)
def test_numbers_at_the_bound_are_read(text: str, value: float, tmp_path: Path) -> None:
    assert loads_json(f"[{text}]", tmp_path / "d.json", "the document", HINT) == [value]


@pytest.mark.parametrize("text", ["1e308", "-1e308", "1.0000001e30", "2" + "0" * 30, "9" * 40])
def test_numbers_past_the_bound_are_refused_before_decimal(text: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"beyond|digits"):
        loads_json(f'{{"x": [{text}]}}', tmp_path / "d.json", "the document", HINT)


def test_size_at_the_limit_is_read_and_one_byte_over_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1000)
    assert read_bytes(path, "the file", 1000, HINT) == b"x" * 1000
    with pytest.raises(InputError, match="1,000 bytes, over the 999-byte limit"):
        read_bytes(path, "the file", 999, HINT)


def test_a_sparse_huge_file_is_refused_by_its_size_not_read(tmp_path: Path) -> None:
    path = tmp_path / "sparse.json"
    with path.open("wb") as f:
        f.truncate(6 * 1024**3)  # 6 GiB, no blocks: reading it would take 6 GiB of memory
    started = time.monotonic()
    with pytest.raises(InputError, match="over the"):
        read_bytes(path, "the document", 512 * 1024**2, HINT)
    assert time.monotonic() - started < 2


def test_a_fifo_is_refused_even_when_opened_directly(tmp_path: Path) -> None:
    """Opened without blocking and judged by fstat: no writer ever comes, and the read returns at once."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes(fifo, "the file", 1000, HINT)
    assert time.monotonic() - started < 2


# ---- the cache: hostile entries are misses ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse", "folder"])
def test_a_hostile_cache_entry_is_a_miss_within_seconds(kind: str, tmp_path: Path) -> None:
    key = "0" * 64
    entry = tmp_path / f"{key}.json"
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif kind == "sparse":
        with entry.open("wb") as f:
            f.truncate(cache.MAX_ENTRY_BYTES + 1)
    else:
        entry.mkdir()
    started = time.monotonic()
    assert cache.read(tmp_path, key) is None
    assert time.monotonic() - started < 2


def test_a_fifo_named_as_usage_file_does_not_hang_the_cache_key(tmp_path: Path) -> None:
    fifo = tmp_path / "usage.yml"
    os.mkfifo(fifo)
    started = time.monotonic()
    key = cache.base_key("tree", ["a"], ["--usage-file", str(fifo)])
    assert len(key) == 64 and time.monotonic() - started < 2
    assert read_bytes_or_none(fifo, 10) is None


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_a_hostile_usage_file_exits_2_within_seconds(kind: str, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    usage = tmp_path / "usage.yml"
    if kind == "fifo":
        os.mkfifo(usage)
    elif kind == "dev-zero":
        usage.symlink_to("/dev/zero")
    else:
        with usage.open("wb") as f:
            f.truncate(6 * 1024**3)
    started = time.monotonic()
    user_error(cli("cost", TRAIN, "--usage-file", str(usage)), "usage.yml")
    assert time.monotonic() - started < 30


def test_a_usage_quantity_of_1e308_is_refused_not_a_crash(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    usage = tmp_path / "usage.yml"
    usage.write_text("version: 1\nresource_type_default_usage:\n  aws:ec2/natGateway:NatGateway:\n")
    with usage.open("a") as f:
        f.write("    monthly_data_processed_gb: 1e308\n")
    user_error(cli("cost", TRAIN, "--usage-file", str(usage)), "monthly_data_processed_gb", "less than or equal")


# ---- numbers in documents: never a crash in the money arithmetic -------------------------------------------------
@pytest.fixture(scope="module")
def train_doc(tmp_path_factory: pytest.TempPathFactory) -> str:
    from gpuinfra.commands.preview import preview_stacks
    from gpuinfra.report.render import render

    text = render(preview_stacks([TRAIN], jobs=1), "json")
    assert '"storageCapacity": 57600' in text  # the FSx file system, priced per GB-month
    return text


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("1e308", ("beyond 1e+30",)),  # refused as it is parsed
        ("1e29", ("too large to price",)),  # parsed, but past Decimal's digits when priced
        ("9e20", ("more than $10^15 a month",)),  # priced, but no real stack costs that
    ],
)
@pytest.mark.parametrize("command", ["cost", "diff"])
def test_a_huge_quantity_in_a_document_is_an_input_error(  # type: ignore[no-untyped-def]
    command: str, value: str, words: tuple[str, ...], train_doc: str, tmp_path: Path, cli
) -> None:
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(train_doc)
    head.write_text(train_doc.replace('"storageCapacity": 57600', f'"storageCapacity": {value}'))
    args = [str(head)] if command == "cost" else [str(base), str(head)]
    user_error(cli(command, *args), "head.json", *words)


# ---- numbers in stack files --------------------------------------------------------------------------------
@pytest.mark.parametrize("digits", [4301, 5000])
def test_a_number_past_pythons_digit_limit_is_named_at_its_line(digits: int, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """int() refuses more than 4,300 digits (sys.get_int_max_str_digits); the parser's ValueError named neither
    the line nor the reason (`line 1: YAML that cannot be read as plain data`)."""
    text = Path(TRAIN).read_text()
    assert "      node_count: 16\n" in text
    lines = text.splitlines()
    line = lines.index("      node_count: 16") + 1
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(text.replace("node_count: 16", "node_count: " + "9" * digits, 1))
    user_error(cli("validate", str(stack)), f"Pulumi.x.yaml:{line}: a number of more than 4,300 digits")


# ---- dataprep run --local: the sample folder ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["sample", "tokenizer"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_hostile_sample_file_is_named_not_read(kind: str, where: str, tmp_path: Path) -> None:
    """datatrove's reader waited on a FIFO in the sample folder forever (the run never ended); a --tokenizer that
    is no regular file was taken for a hub repository id (exit 1, the workers' tracebacks)."""
    from gpuinfra.commands.dataprep import sample_folder

    sample = tmp_path / "sample"
    sample.mkdir()
    if where == "tokenizer":
        for shipped in sample_folder().glob("*.jsonl*"):
            (sample / shipped.name).write_bytes(shipped.read_bytes())
    planted = sample / "part-0.jsonl" if where == "sample" else tmp_path / "tokenizer.json"
    if kind == "fifo":
        os.mkfifo(planted)
    else:
        planted.symlink_to("/dev/zero")
    started = time.monotonic()
    code = "import sys; from gpuinfra.cli import main; sys.argv[0] = 'gpuinfra'; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "dataprep", "run", str(STACKS / "Pulumi.corpus-prep.yaml"), "--local",
         "--sample", str(sample), "--out", str(tmp_path / "out"),
         *(["--tokenizer", str(planted)] if where == "tokenizer" else [])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{planted.name}: " in done.stderr and "not a regular file" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 120
