"""A way in for a newcomer: an internal error (exit 3) prints its traceback with --debug or GPUINFRA_DEBUG=1 and
one line saying how to get it otherwise; a stack name that is not found lists the stacks that exist; the CLI's
default review cache lives in the user's cache directory and can be turned off."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gpuinfra import cli
from gpuinfra.commands import schema
from helpers import ROOT, gpuinfra


def broken(kind: str) -> str:
    raise RuntimeError("planted bug")


def _exit_of(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(schema, "schema_text", broken)
    monkeypatch.setattr(sys, "argv", ["gpuinfra", *argv])
    with pytest.raises(SystemExit) as done:
        cli.main()
    return int(done.value.code or 0)


def test_an_internal_error_is_one_line_and_says_how_to_see_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    assert _exit_of(["schema", "stack"], monkeypatch) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RuntimeError: planted bug" in err
    assert "rerun with --debug or GPUINFRA_DEBUG=1" in err


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_debug_prints_the_traceback(
    how: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(cli.DEBUG_ENV, "0")  # off; and restored after the test, which --debug sets it in
    argv = ["schema", "stack"]
    if how == "flag":
        argv = ["--debug", *argv]
    else:
        monkeypatch.setenv(cli.DEBUG_ENV, "1")
    assert _exit_of(argv, monkeypatch) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and 'raise RuntimeError("planted bug")' in err
    assert "this is a bug" in err


def test_a_stack_not_found_lists_the_stacks_that_exist() -> None:
    result = gpuinfra("validate", "nosuch")
    assert result.returncode == 2
    stacks = sorted(
        p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    )
    assert f"hint: the stacks here: {', '.join(stacks)}" in result.stderr, result.stderr


def test_the_default_review_cache_is_the_users_and_can_be_turned_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GPUINFRA_CACHE", raising=False)
    monkeypatch.delenv("GPUINFRA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cli._cache(None, False) == tmp_path / "gpuinfra" / "previews"
    assert cli._cache(Path("mine"), False) == Path("mine")
    assert cli._cache(None, True) is None
    monkeypatch.setenv("GPUINFRA_CACHE", "off")
    assert cli._cache(None, False) is None


def test_each_stack_previewed_is_announced_to_the_progress_listener(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuinfra.commands.preview import preview_run
    from gpuinfra.commands.progress import listening

    monkeypatch.chdir(ROOT)
    seen: list[int] = []
    with listening(seen.append):
        run = preview_run(["model-registry", "llm-finetune"])
    assert len(run.report.stacks) == 2 and sum(seen) == 2, seen


def test_progress_stays_off_the_terminal_in_ci_and_for_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuinfra.commands.progress import done

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("CI", "true")
    with cli._working("previewing 2 stacks", after_seconds=0, stacks=2):
        done(2)
    monkeypatch.delenv("CI")
    with cli._working("previewing 2 stacks", after_seconds=0, quiet=True, stacks=2):
        done(2)
    assert capsys.readouterr().err == ""
