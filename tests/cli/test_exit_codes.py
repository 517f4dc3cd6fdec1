"""The README's exit-code table holds for every command: each command, given a clean input, an input with an
error finding and an unreadable input, exits with the code the table gives, reports on stdout and problems on
stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bad_inputs import run_cli
from helpers import ROOT, STACKS, write_stack


def readme_codes() -> dict[int, str]:
    text = (ROOT / "docs" / "cli.md").read_text()  # the README's reference, moved into docs/
    table = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \| (.+) \|$", table, re.M)}


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return lambda *args: run_cli(capsys, monkeypatch, *args)


def cases(tmp_path: Path, cli) -> list[tuple[str, int, list[str]]]:  # type: ignore[no-untyped-def]
    """(command, the code the README gives for that input, argv)."""
    registry = str(STACKS / "Pulumi.model-registry.yaml")
    failing = str(write_stack(tmp_path, "llm-train-onprem", spec={"racks.cooling": "air"}))
    missing = str(tmp_path / "Pulumi.nowhere.yaml")
    clean_doc, failing_doc, junk = tmp_path / "clean.json", tmp_path / "failing.json", tmp_path / "junk.json"
    clean_doc.write_text(cli("preview", registry, "--format", "json")[1])
    failing_doc.write_text(cli("preview", failing, "--format", "json")[1])
    junk.write_text("{not json")
    return [
        ("validate", 0, [registry]),
        ("validate", 1, [failing]),
        ("validate", 2, [missing]),
        ("preview", 0, [registry]),
        ("preview", 1, [failing]),
        ("preview", 2, [missing]),
        ("cost", 0, [str(clean_doc)]),
        ("cost", 2, [str(junk)]),
        ("diff", 0, [str(clean_doc), str(clean_doc)]),
        ("diff", 1, [str(clean_doc), str(failing_doc)]),
        ("diff", 2, [str(clean_doc), str(junk)]),
        ("schema", 0, []),
        ("schema", 2, ["--out", str(tmp_path)]),
    ]


def test_every_command_exits_as_the_readme_says(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    table = readme_codes()
    assert {0, 1, 2} <= set(table), table
    assert "error-level finding" in table[1] and "cannot be read" in table[2]
    seen = set()
    for command, expected, args in cases(tmp_path, cli):
        code, out, err = cli(command, *args)
        assert code == expected, (command, args, out[-500:], err)
        seen.add(command)
        if code == 2:
            assert out == "" and err.strip(), (command, "problems go to stderr, nothing to stdout")
            assert "hint: " in err and "Traceback" not in err, err
        else:
            assert out.strip(), (command, "the report goes to stdout")
    assert seen == {"validate", "preview", "cost", "diff", "schema"}
    assert json.loads(cli("schema")[1])["title"]
