"""A sign of life for runs over many stacks: each stack previewed is announced to whoever listens (the CLI's
progress bar on a terminal), from this process, serially or as each worker's group comes back. Nobody listens
in workers, in tests or when the CLI's output is for a program: then announcing is a no-op."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

_LISTENERS: list[Callable[[int], None]] = []


@contextmanager
def listening(callback: Callable[[int], None]) -> Iterator[None]:
    """`callback(n)` is called with each `n` stacks done while the block runs."""
    _LISTENERS.append(callback)
    try:
        yield
    finally:
        _LISTENERS.remove(callback)


def done(stacks: int = 1) -> None:
    """`stacks` more stacks are previewed (made, or read from the cache)."""
    for callback in list(_LISTENERS):
        callback(stacks)


__all__ = ["done", "listening"]
