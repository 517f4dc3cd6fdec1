"""One finding type for every stage that judges a stack: the validators (the spec and its plan), preflight (each
generated request against its cloud's and Kubernetes' own definitions) and the policy pack (the graph against
the organization's rules). A review, a report and an exit code read the same `Finding` whichever stage made it.

One level vocabulary, with the numbers of `logging` (as ParallelCluster's FailureLevel), so levels compare and
sort: info, warning, error. The pack's enforcement levels are Pulumi's words for two of them: advisory is a
warning, mandatory an error (`Level.of`, `Level.enforcement`); they are spoken only where Pulumi's own words
are shown (the report's policy section, the review's policy lines)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

from gpuinfra.errors import FieldPath, format_path

Stage = Literal["validator", "preflight", "policy"]


class Level(IntEnum):
    """Same numbers as `logging`, so levels compare and sort naturally."""

    INFO = 20
    WARNING = 30
    ERROR = 40

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def of(cls, word: str) -> Level:
        """The level a word names: info, warning, error, or the pack's advisory (a warning) and mandatory (an
        error)."""
        return _WORDS[word]

    @property
    def enforcement(self) -> Literal["advisory", "mandatory"]:
        """The pack's word for the level: mandatory blocks, advisory is reported."""
        return "mandatory" if self >= Level.ERROR else "advisory"


_WORDS = {
    "info": Level.INFO,
    "warning": Level.WARNING,
    "error": Level.ERROR,
    "advisory": Level.WARNING,
    "mandatory": Level.ERROR,
}

BLOCKING_LEVELS = frozenset(word for word, level in _WORDS.items() if level >= Level.ERROR)
"""The words of a level that fails a check: an error-level validator or preflight finding, a mandatory policy
violation. Every command's exit code and the review's verdict come from `verdict` (one rule, one place)."""


def blocks(level: str) -> bool:
    """A level, as a report or a review item words it, fails the check."""
    return level in BLOCKING_LEVELS


def verdict(unreadable: bool, levels: Iterable[str]) -> int:
    """The exit code: 2 when an input cannot be read; 1 when any finding blocks; else 0."""
    if unreadable:
        return 2
    return 1 if any(blocks(level) for level in levels) else 0


@dataclass(frozen=True, order=True)
class Finding:
    """A stage's verdict on one place: a field of the spec (validators: `path`), a resource of the graph (`urn`,
    `name`, `type`; preflight also the property `path` inside its inputs and the offending `value`), or the stack
    as a whole (the pack: no urn)."""

    rule: str
    """The validator rule id, preflight rule id or policy name."""
    level: Level
    path: FieldPath | str
    """The field path inside the spec (validators), or the property path in the resource's Pulumi inputs
    (preflight; empty for the resource as a whole)."""
    message: str
    hint: str | None = None
    """What to change (validators)."""
    stage: Stage = "validator"
    """Which stage found it: the validators (also the engine's failure and the cost stage's warnings, which the
    report lists among the stack's own findings and a review lets `--suppress` silence alike), preflight or the
    pack."""
    urn: str = ""
    """The resource judged; empty for the spec or the stack as a whole."""
    name: str = ""
    type: str = ""
    value: str = ""
    """The offending value, cut to a readable length (preflight)."""
    source: str = ""
    """Where the rule comes from: a botocore operation, a CloudFormation schema, a document's URL (preflight)."""
    description: str = ""
    """The policy's own description (the pack)."""
    unknown: bool = False
    """The policy could not run: a value it reads is unknown during preview."""

    @property
    def blocking(self) -> bool:
        return self.level >= Level.ERROR

    @property
    def where(self) -> str:
        """Where a reader looks: the spec path, the resource's property (`name.path`), or the resource."""
        if self.stage == "validator":
            return format_path(self.path) if isinstance(self.path, tuple) else self.path
        if self.stage == "preflight":
            return f"{self.name}.{self.path}" if self.path else self.name
        return self.name or self.urn.rsplit("::", 1)[-1]


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Blocking first, then by rule, resource and message: the order the report and the review list the pack's
    findings in."""
    return sorted(findings, key=lambda f: (not f.blocking, f.rule, f.urn, f.message))


__all__ = ["BLOCKING_LEVELS", "Finding", "Level", "Stage", "blocks", "ordered", "verdict"]
