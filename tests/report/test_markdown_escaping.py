"""No injection into the pull-request comment: free text from a spec or a graph reaches the Markdown only through
`report.format.markdown_text`, which escapes raw HTML, Markdown punctuation and @mentions (GitHub Flavored Markdown
spec 0.29: "Backslash escapes" (any ASCII punctuation), "Raw HTML"; GitHub Docs, "Basic writing and formatting
syntax": @mentions notify). Checked on the function and through the real preview renderer."""

from __future__ import annotations

import re

import pytest
from gpuinfra.commands.validate import to_report
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.report.build.stack import graph_report, policy_report
from gpuinfra.report.format import markdown_text
from gpuinfra.report.model import Report
from gpuinfra.report.render.markdown import render_markdown
from helpers import checked, example_graph
from policy_helpers import edited, facts_for

HOSTILE = "x</details><img src=x onerror=alert(1)> @octocat | cell | [click](https://evil.example) `code` **b**\n# h"


def unescaped(text: str, char: str) -> list[int]:
    """Positions of `char` not preceded by a backslash."""
    return [m.start() for m in re.finditer(re.escape(char), text) if m.start() == 0 or text[m.start() - 1] != "\\"]


def test_the_escaper_makes_every_construct_inert() -> None:
    out = markdown_text(HOSTILE)
    assert "<" not in out and ">" not in out  # no raw HTML: &lt; &gt;
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "&lt;/details&gt;" in out
    assert "@\u200boctocat" in out and "@octocat" not in out
    for char in "|[]`*#":
        assert unescaped(out, char) == [], char
    assert "\n" not in out
    assert markdown_text("a\nb", breaks=True) == "a<br>b"


def test_a_code_span_cannot_be_closed_or_split() -> None:
    out = markdown_text("a`b|c\nd", code=True)
    assert out == "`a'b\\|c d`"
    assert out.count("`") == 2


@pytest.mark.parametrize("value", [None, "", "plain words", "monthly_budget_usd"])
def test_plain_text_renders_as_itself(value: str | None) -> None:
    out = markdown_text(value)
    assert re.sub(r"\\(.)", r"\1", out) == (value or "")


def test_a_hostile_tag_value_in_a_violation_is_inert_in_the_comment() -> None:
    """A hand-edited program tags the file system with hostile text: the separation-workload-tag violation quotes
    it, and the preview comment shows it escaped."""
    fsx = "aws:fsx/lustreFileSystem:LustreFileSystem"
    graph = edited(example_graph("llm-train"), [(fsx, None, {"tags": {"workload": HOSTILE}})])
    run = police(graph, facts_for("llm-train"), pack_config())
    assert any(HOSTILE in v.message for v in run.violations), "the violation quotes the value"
    stack = policy_report(graph_report(to_report(checked("llm-train")), graph), run, graph)
    text = render_markdown(Report(command="preview", stacks=[stack]))
    assert "<img" not in text and "</details><img" not in text
    assert "@octocat" not in text and "@\u200boctocat" in text
    assert "[click](https://evil.example)" not in text
    row = next(line for line in text.splitlines() if "separation-workload-tag" in line and "octocat" in line)
    assert len(unescaped(row, "|")) == 5, row  # the table's own four cells, no more
