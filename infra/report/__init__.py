"""Report model and its renderers: one `render_<format>(report) -> str` per format."""

from __future__ import annotations

from .json import render_json
from .markdown import render_markdown
from .model import REPORT_VERSION, Report
from .table import render_table

RENDERERS = {"table": render_table, "markdown": render_markdown, "json": render_json}


def render(report: Report, fmt: str) -> str:
    return RENDERERS[fmt](report)


__all__ = ["RENDERERS", "REPORT_VERSION", "Report", "render", "render_json", "render_markdown", "render_table"]
