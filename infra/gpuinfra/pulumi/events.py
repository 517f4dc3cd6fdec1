"""Engine event logs (`pulumi preview --event-log`, JSON lines) checked with the Pulumi SDK's own type,
`pulumi.automation.events.EngineEvent.from_json`: a line Pulumi's type cannot read (an unknown step op, a
malformed resource event) is an input error naming its line, before the graph reader (graph/readers.py) reads
the steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pulumi.automation.events import EngineEvent

from gpuinfra.errors import InputError

READ_ERRORS = (ValueError, KeyError, TypeError, AttributeError)


def checked_events(lines: list[dict[str, Any]], where: Path) -> list[EngineEvent]:
    """Every line as Pulumi's EngineEvent (the dicts stay the reader's input; these prove their shape)."""
    out = []
    for number, line in enumerate(lines, start=1):
        try:
            out.append(EngineEvent.from_json(line))
        except READ_ERRORS as exc:
            raise InputError.single(
                f"event {line.get('sequence', number)} is not a Pulumi engine event: {type(exc).__name__}: {exc}",
                file=where,
                line=number,
                hint="give the event log exactly as `pulumi preview --event-log FILE` wrote it",
            ) from None
    return out


__all__ = ["checked_events"]
