"""Which stacks a command runs on when none is named: every stack of the Pulumi project (its stack folder's
Pulumi.<stack>.yaml files), as `make preview` does."""

from __future__ import annotations

from pathlib import Path

from gpuinfra.errors import InputError
from gpuinfra.load import project_dir, stack_names, stacks_dir


def stacks_or_every(stacks: list[str] | None, start: Path | None = None) -> list[str]:
    """`stacks` as given, or every stack of the project at or above `start` (the working directory)."""
    if stacks:
        return stacks
    project = project_dir(start)
    if project is None:
        raise InputError.single(
            "no stack named, and no Pulumi project (Pulumi.yaml) here or above",
            hint="name stacks or stack files, or run in a Pulumi project (gpuinfra init WORKLOAD NAME makes one)",
        )
    names = stack_names(project)
    if not names:
        raise InputError.single(
            f"no stack named, and no Pulumi.<stack>.yaml in {stacks_dir(project)}",
            hint="gpuinfra init WORKLOAD NAME writes one",
        )
    return names


__all__ = ["stacks_or_every"]
