"""The cyclic garbage collector in a one-shot process: off for the command, one pass between stacks.

A command's objects mostly live until it ends: the provider SDKs' modules and classes it imports, the catalog,
each stack's graph and snapshot. The collector's automatic passes walk them all, again and again as imports add
more: 0.3-0.5 s of a one-stack `gpuinfra preview` on these machines (bench/RESULTS.md, "Whole process"),
freeing almost nothing. So the installed script (`gpuinfra.cli.run`) turns it off, and a run of many stacks
makes one pass after each stack but the last, then freezes what survived (`gc.freeze`: later passes skip it),
so the garbage cycles of one stack's engine run never pile up over two hundred stacks. Reference counting frees
everything else as usual. Tests and other callers of `main` keep Python's default.
"""

from __future__ import annotations

import gc


def one_shot() -> None:
    """For the rest of this process, collect cycles only where `between_stacks` says."""
    gc.disable()


def between_stacks() -> None:
    """One pass over what the last stack left (everything older is frozen), then freeze the survivors; nothing
    when the collector runs on its own (it was not turned off by `one_shot`)."""
    if gc.isenabled():
        return
    gc.collect()
    gc.freeze()


__all__ = ["between_stacks", "one_shot"]
