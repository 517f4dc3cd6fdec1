"""Suppression hygiene: a spec may silence warnings by rule id, errors only when registered suppressible (an
accepted risk), never unknown ids."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import WorkloadSpec, did_you_mean
from gpuinfra.validators.base import RULES, Failure, Level, rule


@rule(Level.WARNING)
def unknown_suppression(spec: WorkloadSpec) -> Iterator[Failure]:
    """`suppress` names a rule that does not exist, or an error (errors cannot be silenced)."""
    for i, rid in enumerate(spec.suppress):
        known = RULES.get(rid)
        if known is None:
            yield Failure(f"suppress names unknown rule {rid!r}", ("suppress", i), did_you_mean(rid, RULES))
        elif not known.suppressible:
            yield Failure(f"rule {rid!r} is an error and cannot be suppressed", ("suppress", i), "fix the spec instead")


__all__ = ["unknown_suppression"]
