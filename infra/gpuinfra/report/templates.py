"""The Markdown report templates: preview, cost and diff (top-level `templates/report/`). Every template gets `md`,
the one escaping function for free text in the pull-request comment (report/format.py `markdown_text`)."""

from typing import Any

from gpuinfra.report.format import markdown_text
from gpuinfra.templating import renderer

_render = renderer("report")


def render(name: str, **context: Any) -> str:
    return str(_render(name, md=markdown_text, **context))


__all__ = ["render"]
