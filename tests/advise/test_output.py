"""What `advise` prints: the README's example output is the command's own (line for line), the Markdown carries
the lifetime-cost chart and Mermaid's parser accepts it, and unknown figures print '-'."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT, gpuinfra

README = (ROOT / "README.md").read_text()
SECTION = README.split("## Before any cluster", 1)[1].split("\n## ", 1)[0]


def test_the_readme_opens_with_the_ladder_before_the_quickstart() -> None:
    assert README.index("## Before any cluster") < README.index("## Quickstart")


def test_the_readme_example_output_is_what_the_command_prints() -> None:
    command = re.search(r"```console\n(gpuinfra advise [^\n#]+?)\s+#", SECTION)
    shown = re.search(r"```text\n(.*?)```", SECTION, flags=re.S)
    assert command and shown
    result = gpuinfra(*command.group(1).split()[1:], cwd=ROOT)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    for line in shown.group(1).splitlines():
        assert line in printed, line


def test_the_markdown_has_the_tables_and_a_chart_mermaid_parses() -> None:
    from report.test_mermaid import parse  # the parser the picture tests use (tools/mermaid)

    result = gpuinfra("advise", "stacks/intents/new-70b.yaml", "--format", "markdown", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "| provider | model |" in text and "### Lifetime bill over 36 months" in text
    chart = re.search(r"```mermaid\n(.*?)```", text, flags=re.S)
    assert chart and chart.group(1).startswith("xychart-beta")
    lines = [line for line in chart.group(1).splitlines() if line.strip().startswith("line [")]
    assert len(lines) == 2  # the answer's own cumulative cost, and the cheapest eligible hosted API
    assert all(len(line.split(",")) == 37 for line in lines)  # months 0..36
    assert parse(chart.group(1)) == {"ok": True, "type": "xychart"}


def test_data_preparation_prints_its_planned_cost() -> None:
    result = gpuinfra("advise", "stacks/intents/new-70b.yaml", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert re.search(r"data preparation \(40 TB raw\)\s+one-off\s+\$[0-9,]+\.[0-9]{2}\s+plan_dataprep", result.stdout)
    assert "= at least $" not in result.stdout


def test_data_preparation_without_a_price_prints_unknown_not_zero(tmp_path: Path) -> None:
    # The catalog prices the workers (m7i.2xlarge) in us-east-1 only: the corpus prepared in ap-south-1, beside the
    # training run, has no price for its nodes, and the bill says so rather than counting it as nothing.
    text = (ROOT / "stacks/intents/new-70b.yaml").read_text()
    moved = text.replace("    region: us-east-1\n", "    region: ap-south-1\n", 1)
    assert moved != text
    intent = tmp_path / "new-70b.yaml"
    intent.write_text(moved)
    result = gpuinfra("advise", str(intent), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert re.search(r"data preparation \(40 TB raw\)\s+one-off\s+-\s", result.stdout)
    assert "= at least $" in result.stdout and "unknown, not zero: data preparation" in result.stdout


def test_the_help_gives_examples_of_itself() -> None:
    """The CLI's manners (tests/cli/test_manners.py): every example line is the command itself."""
    result = gpuinfra("advise", "--help")
    assert result.returncode == 0, result.stderr
    examples = result.stdout.split("Examples:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in examples.splitlines() if line.strip()]
    assert len(lines) >= 2 and all(line.startswith("gpuinfra advise ") for line in lines)
    assert "--init" in result.stdout and "--format" in result.stdout
