"""The project's one error type and the problem records it carries.

Every failure a user can cause (unreadable file, wrong field, unknown reference) becomes an
`InputError` holding `Problem`s that name the file, line and field path. The CLI prints them and
exits 2; nothing that reaches the user is a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

FieldPath = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """Render a field path the way users write it: ``regions[2].max_replicas``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the input allows."""

    message: str
    file: Path | None = None
    line: int | None = None
    path: FieldPath = ()
    hint: str | None = None
    about: str | None = None
    """What the field is (its schema description), so the user sees what belongs there, not a regex."""

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = _display(self.file) + (f":{self.line}" if self.line else "")
        parts = [p for p in (where, format_path(self.path)) if p]
        text = ": ".join([*parts, self.message])
        if self.about:
            text += f"\n    field: {self.about}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text


def shortened(name: str) -> str:
    """A path longer than a line (a 5,000-character name) as its head, its tail and its length, so the reason
    after it stays on screen."""
    return name if len(name) <= 200 else f"{name[:120]}...{name[-40:]} ({len(name):,} characters)"


def _display(path: Path) -> str:
    """The path as the user wrote it, relative to the working directory when inside it (a symlink is named
    as itself, not as what it points to, which may not exist), shortened past a line."""
    try:
        return shortened(str(path.absolute().relative_to(Path.cwd())))
    except (ValueError, OSError):
        pass
    try:
        return shortened(str(path.resolve().relative_to(Path.cwd().resolve())))
    except (ValueError, OSError, RuntimeError):  # outside the working directory, or a symlink loop
        return shortened(str(path))


class GpuinfraError(Exception):
    """Root of every error gpuinfra raises on purpose."""


@dataclass
class InputError(GpuinfraError):
    """The input cannot be read or does not fit the schema (exit code 2)."""

    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.render())

    @classmethod
    def single(cls, message: str, **where: object) -> InputError:
        return cls([Problem(message, **where)])  # type: ignore[arg-type]

    def render(self) -> str:
        return "\n".join(p.render() for p in self.problems)

    def __str__(self) -> str:
        return self.render()


def raise_if(problems: Iterable[Problem]) -> None:
    """Raise one InputError carrying all problems, if there are any."""
    found = list(problems)
    if found:
        raise InputError(found)


__all__ = [
    "FieldPath",
    "GpuinfraError",
    "InputError",
    "Problem",
    "format_path",
    "raise_if",
    "shortened",
]
