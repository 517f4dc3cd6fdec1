"""Renderers, one module per format (table.py, markdown.py, json.py), each a `render(report) -> str` that
dispatches on the report's type (a preview or validate `Report`, a `CostReport`, a `DiffReport`, a `CatalogReport`).

A new format is one module here with its own `render`: `FORMATS` finds it and the CLI's `--format` offers it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from gpuinfra.report.formats import HELPERS
from gpuinfra.report.model import CatalogReport, CostReport, DiffReport, Report

AnyReport = Report | CostReport | DiffReport | CatalogReport

FORMATS: dict[str, Callable[[AnyReport], str]] = {
    m.name: importlib.import_module(f"{__name__}.{m.name}").render
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
    if m.name not in HELPERS
}


def render(report: AnyReport, fmt: str) -> str:
    return FORMATS[fmt](report)


__all__ = ["FORMATS", "AnyReport", "render"]
