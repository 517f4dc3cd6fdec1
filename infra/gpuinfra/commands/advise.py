"""`gpuinfra advise INTENT`: read the intent file, walk the ladder over the catalog and the hosted-API prices,
and hand back the advice (and, for `--init`, the stack specs the answer needs)."""

from __future__ import annotations

from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.managed import load_managed_prices
from gpuinfra.plan.advise import Walked, advise
from gpuinfra.spec.intent import read_intent


def advise_command(path: Path) -> Walked:
    """The advice for the intent at `path`; an unreadable or ill-typed file raises InputError (exit 2)."""
    intent = read_intent(path).spec
    return advise(intent, load_catalog(), load_managed_prices())


__all__ = ["advise_command"]
