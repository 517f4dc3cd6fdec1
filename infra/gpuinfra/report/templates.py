"""The Markdown report templates: preview, cost and diff (top-level `templates/report/`)."""

from gpuinfra.templating import renderer

render = renderer("report")

__all__ = ["render"]
