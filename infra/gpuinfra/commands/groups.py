"""Which stacks of one run preview together: an account's stacks, in one process, heaviest group first.

A stack's budget ledger totals every other stack of its account (policy/rules/ledger.py). Previewed one by one
in separate workers, each stack of an account built its siblings in the engine again: a 40-stack run did the
engine's work about twice, and `--jobs 2` did it on both cores (bench/RESULTS.md, "Repository at scale"). So an
account's stacks go to one process, which builds them all before policing any (commands/preview.py `_group`):
each one's total is then the run's own (`ledger.seed`). Groups start heaviest first, so the last to finish is
a small one (longest-processing-time-first); a group larger than its share of the cores is split, since one
account's stacks must not wait on one core. Grouping decides only where and in which order stacks are
previewed: the report keeps the order given, and a stack whose account cannot be told stands alone.
"""

from __future__ import annotations

from pathlib import Path

from gpuinfra.commands.stack_cache import peer


def account_groups(stacks: list[str], jobs: int) -> list[list[int]]:
    """Positions in `stacks`, grouped by (folder, account name), each group in the order given; heaviest first
    (by the stack files' sizes: a fleet's regions and a cluster's queues are most of both file and graph)."""
    from gpuinfra.errors import InputError
    from gpuinfra.load import stack_path

    groups: dict[object, list[int]] = {}
    weight: dict[int, int] = {}
    for i, arg in enumerate(stacks):
        key: object = i
        try:
            path = stack_path(arg)
            weight[i] = path.stat().st_size
            account = peer(path).account
        except (InputError, OSError):
            weight[i] = 0
            account = None
        if account is not None:
            key = (Path(path).resolve().parent, account)
        groups.setdefault(key, []).append(i)
    share = -(-len(stacks) // max(1, jobs))
    parts = [group[k : k + share] for group in groups.values() for k in range(0, len(group), share)]
    return sorted(parts, key=lambda part: -sum(weight[i] for i in part))


__all__ = ["account_groups"]
