"""Suppression hygiene: a spec may silence warnings by rule id, errors only when registered suppressible (an
accepted risk), never unknown ids."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import WorkloadSpec, did_you_mean
from gpuinfra.validators.base import Failure, Level, rule
from gpuinfra.validators.runner import known_rules


@rule(Level.WARNING)
def unknown_suppression(spec: WorkloadSpec) -> Iterator[Failure]:
    """`suppress` names a rule that does not exist, or an error (errors cannot be silenced)."""
    rules = known_rules(spec.suppress)
    for i, rid in enumerate(spec.suppress):
        known = rules.get(rid)
        rest = [r for j, r in enumerate(spec.suppress) if j != i]
        if known is None:
            close = did_you_mean(rid, rules)
            closest = close.split("'")[1] if close else None
            edit = _suppress([*rest[:i], closest, *rest[i:]] if closest else rest)
            yield Failure(
                f"suppress names unknown rule {rid!r}",
                ("suppress", i),
                f"{close} If so, write {edit}" if close else f"write {edit}",
            )
        elif not known.suppressible:
            yield Failure(
                f"rule {rid!r} is an error and cannot be suppressed",
                ("suppress", i),
                f"write {_suppress(rest)} and fix what {rid} reports (`gpuinfra validate` names the field)",
            )


def _suppress(ids: list[str]) -> str:
    """The `suppress` line to write (flow YAML), or its removal when nothing is left."""
    return f"`suppress: [{', '.join(ids)}]`" if ids else "`suppress: []` (or remove suppress)"


__all__ = ["unknown_suppression"]
