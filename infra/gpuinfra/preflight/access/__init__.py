"""Access evaluation, offline: named data flows judged by the identity, resource and key policies, KMS grants
and permission boundaries of the graphs, the way AWS evaluates them across accounts (see decide.py)."""

from __future__ import annotations

from gpuinfra.preflight.access.decide import Decision, Grant, Policies, Principal, Request, evaluate
from gpuinfra.preflight.access.statements import Statement, UnreadablePolicy, parse

__all__ = [
    "Decision",
    "Grant",
    "Policies",
    "Principal",
    "Request",
    "Statement",
    "UnreadablePolicy",
    "evaluate",
    "parse",
]
