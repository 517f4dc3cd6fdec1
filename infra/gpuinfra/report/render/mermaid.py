"""The Mermaid renderer: a stack's picture (report/build/picture.py) as a flowchart GitHub renders in a comment.
`render(report)`: every stack of a preview, or the changed stacks of a diff, in one flowchart; `flowchart` is
one stack's, for the Markdown comment. Labels are escaped with Mermaid's entity codes, so a name can neither
end a label nor the code fence around it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import singledispatch

from gpuinfra.report.model import DiffReport, PictureOut, Report

MARKS = {"added": "+ ", "changed": "~ ", "replaced": "-/+ ", "deleted": "- ", "same": ""}
CLASSES = {
    "added": "fill:#dafbe1,stroke:#1a7f37",
    "changed": "fill:#fff8c5,stroke:#9a6700",
    "replaced": "fill:#ffebe9,stroke:#cf222e,stroke-width:3px",
    "deleted": "fill:#ffebe9,stroke:#cf222e,stroke-dasharray:5 5",
}
_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;", "\n": " ", "\r": " "}


def label(text: str) -> str:
    """A quoted Mermaid label: every character that could end it (or the fence) as an entity code."""
    return '"' + "".join(_ENTITIES.get(ch, ch) for ch in text) + '"'


def _stack_lines(prefix: str, picture: PictureOut, indent: str) -> list[str]:
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for node in picture.nodes:
        groups.setdefault(node.group, []).append(
            f"{indent}    {prefix}{node.id}[{label(MARKS[node.status] + node.label)}]"
        )
    for g, (name, lines) in enumerate(groups.items()):
        out += [f"{indent}subgraph {prefix}g{g}[{label(name)}]", *lines, f"{indent}end"]
    out += [f"{indent}{prefix}{a} --> {prefix}{b}" for a, b in picture.edges]
    return out


def _classes(pictures: Iterable[tuple[str, PictureOut]]) -> list[str]:
    used: dict[str, list[str]] = {}
    for prefix, picture in pictures:
        for node in picture.nodes:
            if node.status in CLASSES:
                used.setdefault(node.status, []).append(prefix + node.id)
    return [
        *(f"    classDef {status} {CLASSES[status]}" for status in used),
        *(f"    class {','.join(ids)} {status}" for status, ids in used.items()),
    ]


def flowchart(picture: PictureOut) -> str:
    """One stack's picture."""
    return "\n".join(["flowchart LR", *_stack_lines("", picture, "    "), *_classes([("", picture)])])


def stacks_flowchart(pictures: list[tuple[str, PictureOut]]) -> str:
    """Several stacks' pictures, one subgraph each."""
    lines = ["flowchart LR"]
    prefixed = [(f"s{i}", name, p) for i, (name, p) in enumerate(pictures)]
    for prefix, name, p in prefixed:
        lines += [f"    subgraph {prefix}[{label(name)}]", *_stack_lines(prefix, p, "        "), "    end"]
    return "\n".join([*lines, *_classes([(prefix, p) for prefix, _, p in prefixed])]) + "\n"


NOTHING = 'flowchart LR\n    note["nothing to draw: --format mermaid draws the resources of preview and diff"]\n'


@singledispatch
def render(report: object) -> str:
    """Reports without resources (validate, cost, catalog) have nothing to draw: a diagram that says so."""
    return NOTHING


@render.register
def render_preview_mermaid(report: Report) -> str:
    if report.command != "preview":
        return NOTHING
    return stacks_flowchart([(s.stack, s.picture) for s in report.stacks if s.picture is not None])


@render.register
def render_diff_mermaid(report: DiffReport) -> str:
    return stacks_flowchart([(s.stack, s.picture) for s in report.stacks if s.picture is not None])


__all__ = ["CLASSES", "MARKS", "flowchart", "label", "render", "stacks_flowchart"]
