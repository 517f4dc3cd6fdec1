"""Markdown renderer (the pull-request comment), written as a Jinja2 template in templates/."""

from __future__ import annotations

from ..templating import render
from .model import Report


def render_markdown(report: Report) -> str:
    return render("report.md.j2", report=report)


__all__ = ["render_markdown"]
