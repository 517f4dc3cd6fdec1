"""Every bad input of the corpus (tests/cli/bad_inputs.py) gives exit 2 from `validate` and from `preview`, with
the file and line, the field path and a hint on stderr, nothing on stdout, values cut to a readable length
and no Python repr or traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bad_inputs import CORPUS, Bad, run_cli
from helpers import write_stack

REPRS = re.compile(r"TaggedScalar|odict_keys|Commented(Map|Seq)|<class |object at 0x|Traceback")


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
@pytest.mark.parametrize("command", ["validate", "preview"])
def test_bad_input_exits_2_naming_file_line_path_and_hint(
    case: Bad, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = write_stack(tmp_path, case.stack, case.spec, case.org, text=case.text)
    code, out, err = run_cli(capsys, monkeypatch, command, str(stack))
    assert code == 2, out + err
    assert out == "", "problems go to stderr, the report (none) to stdout"
    assert not REPRS.search(err), err
    file = "org.yaml" if case.in_org else stack.name
    assert re.search(rf"{re.escape(file)}:\d+", err), err
    if case.path is not None:
        assert f": {case.path}" in err or f": {case.path}." in err or f": {case.path}[" in err, err
    assert "hint: " in err, err
    assert max(len(line) for line in err.splitlines()) < 400, "values are cut to a readable length"
