"""The report model: what every renderer (table, Markdown, JSON) formats. Versioned; `diff` reads it.

Renderers import only this module. Unknown money is None, never zero.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

REPORT_VERSION: Literal[1] = 1


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FindingOut(Model):
    rule: str
    level: Literal["info", "warning", "error"]
    path: str
    message: str
    hint: str | None = None
    file: str | None = None
    line: int | None = None


class Section(Model):
    """A titled table or list of facts for people: the plan, summarized."""

    title: str
    columns: list[str] = []
    rows: list[list[str]] = []
    notes: list[str] = []


class ResourceOut(Model):
    """One registration of the resource graph."""

    urn: str
    type: str
    name: str
    parent: str | None = None
    provider: str | None = None
    custom: bool = True
    dependencies: list[str] = []
    inputs: dict[str, Any] = {}


class PolicyViolationOut(Model):
    """A policy's verdict on one resource (or on the stack as a whole: resource None)."""

    policy: str
    level: Literal["advisory", "mandatory"]
    resource: str | None = None
    """URN of the resource in violation; None for the stack."""
    resource_name: str | None = None
    message: str
    description: str = ""


class PolicyOut(Model):
    """How one policy of the pack fared on the stack."""

    name: str
    kind: Literal["resource", "stack"]
    level: Literal["advisory", "mandatory", "remediate", "disabled"]
    status: Literal["passed", "failed", "not-applicable", "disabled"]
    violations: int = 0
    reason: str | None = None
    """Why the policy did not apply, when it did not."""


class PolicyReportOut(Model):
    """The policy pack's run over the stack's graph (preview only)."""

    pack: str
    policies: list[PolicyOut] = []
    violations: list[PolicyViolationOut] = []


class StackReport(Model):
    stack: str
    file: str
    workload: Literal["training", "inference", "registry"]
    account: str
    account_id: str | None = None
    findings: list[FindingOut] = []
    plan: dict[str, Any] = {}
    summary: list[Section] = []
    resources: list[ResourceOut] | None = None
    """The resource graph (preview only)."""
    policy: PolicyReportOut | None = None
    """The policy pack's verdicts on the graph (preview only)."""


class InputProblem(Model):
    """A stack that could not be read (exit 2)."""

    stack: str
    messages: list[str]


class Report(Model):
    version: Literal[1] = REPORT_VERSION
    command: str
    stacks: list[StackReport] = []
    problems: list[InputProblem] = []

    @property
    def exit_code(self) -> int:
        if self.problems:
            return 2
        if any(f.level == "error" for s in self.stacks for f in s.findings):
            return 1
        mandatory = (v for s in self.stacks if s.policy for v in s.policy.violations if v.level == "mandatory")
        return 1 if any(mandatory) else 0


__all__ = [
    "REPORT_VERSION",
    "FindingOut",
    "InputProblem",
    "PolicyOut",
    "PolicyReportOut",
    "PolicyViolationOut",
    "Report",
    "ResourceOut",
    "Section",
    "StackReport",
]
