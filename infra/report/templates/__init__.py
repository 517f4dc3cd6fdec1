"""The Markdown report templates: preview, cost and diff (package data)."""

from infra.templating import renderer

render = renderer(__name__.rsplit(".", 1)[0])

__all__ = ["render"]
