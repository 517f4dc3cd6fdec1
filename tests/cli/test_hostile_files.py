"""Files that are not what they claim: special files, symlink loops, oversized or non-UTF-8 input, `--out`
paths that cannot be written, and JSON documents of the wrong shape for `diff` and `cost`. Each is one
exit-2 message on stderr naming the file and what to do, never a traceback and never a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bad_inputs import run_cli
from gpuinfra.spec.yamlfile import MAX_BYTES
from helpers import STACKS, write_stack


def assert_clean_exit_2(code: int, out: str, err: str, *names: str) -> None:
    assert code == 2, out + err
    assert "Traceback" not in err and "unexpectedly" not in err, err
    assert "hint: " in err, err
    for name in names:
        assert name in err, err


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return lambda *args: run_cli(capsys, monkeypatch, *args)


def test_a_fifo_as_a_stack_is_refused_without_blocking(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "Pulumi.fifo.yaml"
    os.mkfifo(fifo)
    assert_clean_exit_2(*cli("validate", str(fifo)), "not a regular file")


def test_a_symlink_loop_is_named_not_a_crash(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    loop = tmp_path / "Pulumi.loop.yaml"
    loop.symlink_to(loop)
    assert_clean_exit_2(*cli("preview", str(loop)), "Pulumi.loop.yaml", "symbolic links")


def test_an_oversized_stack_names_the_limit(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    big = tmp_path / "Pulumi.big.yaml"
    big.write_text("config: {}\n" + "#" * MAX_BYTES)
    assert_clean_exit_2(*cli("validate", str(big)), f"{MAX_BYTES:,}-byte limit")


def test_a_stack_in_another_encoding_names_its_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    latin = tmp_path / "Pulumi.latin.yaml"
    latin.write_bytes(b"config:\n  gpuinfra:training:\n    name: caf\xe9\n")
    assert_clean_exit_2(*cli("validate", str(latin)), "Pulumi.latin.yaml:3", "not UTF-8")


def test_an_org_path_in_the_stack_is_refused(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A stack cannot choose its organization file (tests/policies/test_trusted_org.py has the attack)."""
    stack = write_stack(tmp_path, "llm-train")
    text = stack.read_text().replace("config:\n", "config:\n  gpuinfra:org: elsewhere/org.yaml\n", 1)
    stack.write_text(text)
    assert_clean_exit_2(*cli("validate", str(stack)), "elsewhere/org.yaml", "names its own organization file")


@pytest.mark.parametrize("command", ["validate", "schema"])
def test_out_into_a_directory(command: str, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    args = [command, "llm-train"] if command == "validate" else [command]
    code, out, err = cli(*args, "--out", str(tmp_path))
    assert_clean_exit_2(code, out, err, "cannot write the report")
    assert len(err.strip().splitlines()) == 2  # the problem and its hint


def test_out_under_a_file(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert_clean_exit_2(*cli("schema", "--out", str(blocker / "schema.json")), f"{blocker} is not a directory")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full is a Linux device")
def test_out_to_a_device_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: --out takes only a regular file (or a new one); /dev/full would have failed on write."""
    assert_clean_exit_2(*cli("schema", "--out", "/dev/full"), "not a regular file")


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills mid-write: one clear error, the old report intact, no temporary file left."""
    import os as os_module

    from gpuinfra.errors import InputError
    from gpuinfra.spec.files import write_output

    report = tmp_path / "report.md"
    report.write_text("old")

    def full(fd: int, *args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os_module, "fdopen", full)
    with pytest.raises(InputError, match="No space left on device"):
        write_output(report, "new")
    assert report.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_in_a_read_only_directory(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    tmp_path.chmod(0o500)
    try:
        assert_clean_exit_2(*cli("schema", "--out", str(tmp_path / "s.json")), "cannot write the report")
    finally:
        tmp_path.chmod(0o700)


DOCUMENTS = {
    "not-json": b'{"steps": [1,\n',
    "bad-utf8": b'{"steps": "\xff"}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "a-number": b"42",
    "wrong-types": json.dumps({"version": 1, "command": "preview", "stacks": "x"}).encode(),
    "stack-not-a-mapping": json.dumps({"version": 1, "command": "preview", "stacks": [7]}).encode(),
    "steps-not-a-list": json.dumps({"steps": {"a": 1}}).encode(),
    "export-not-a-mapping": json.dumps({"deployment": [1]}).encode(),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@pytest.mark.parametrize("command", ["cost", "diff"])
def test_documents_of_any_shape(name: str, command: str, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    doc = tmp_path / f"{name}.json"
    doc.write_bytes(DOCUMENTS[name])
    args = [command, str(doc)] if command == "cost" else [command, str(doc), str(doc)]
    assert_clean_exit_2(*cli(*args), f"{name}.json")


def test_a_validate_report_is_not_a_diff_base(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A validate document has no resources: comparing it would report every resource as added."""
    base = tmp_path / "base.json"
    code, out, _ = cli("validate", str(STACKS / "Pulumi.model-registry.yaml"), "--format", "json")
    assert code == 0
    base.write_text(out)
    head = tmp_path / "head.json"
    code, out, _ = cli("preview", str(STACKS / "Pulumi.model-registry.yaml"), "--format", "json")
    head.write_text(out)
    assert_clean_exit_2(*cli("diff", str(base), str(head)), "base.json", "validate")
