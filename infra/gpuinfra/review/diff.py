"""Compare two sides of a review (base and head): resources added, removed and changed property by property,
whether a change updates in place or replaces, the cost change per resource, per stack and in total, and the
findings (validator findings, policy results, Pulumi diagnostics) that appear or go away.

Pure functions over plain data. Resources match by type and logical name (URNs differ between the embedded
engine and the real one); findings by (stack, rule, where, message). One dict per stack and side, so the
work is linear in the graph; property diffs run only on resources whose inputs differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpuinfra.cost import Breakdown
from gpuinfra.findings import BLOCKING_LEVELS, blocks
from gpuinfra.graph import SECRET, STACK_TYPE, Graph, Resource
from gpuinfra.graph.readers import Step
from gpuinfra.plan.figures import Figure
from gpuinfra.review.effects import MAY_REPLACE, REPLACE, Replacements
from gpuinfra.review.stateful import DataLoss, data_loss

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<absent>"})()
"""An absent property (distinct from null)."""
BLOCKING = BLOCKING_LEVELS
PULUMI = "pulumi"
"""Reason of a replacement Pulumi itself reported (replaceReasons)."""
IGNORED = frozenset({"__defaults"})


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """Anything a reviewer must read: a validator finding, a policy result, a Pulumi diagnostic."""

    stack: str
    source: str
    """validator, policy, preflight or pulumi."""
    rule: str
    level: str
    """error, warning, info (validators, preflight); mandatory, advisory (policies)."""
    where: str
    """Resource name or spec path."""
    message: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.stack, self.rule, self.where, self.message)

    @property
    def blocking(self) -> bool:
        return blocks(self.level)


@dataclass(frozen=True)
class Snapshot:
    """One stack on one side of the review."""

    stack: str
    graph: Graph | None
    """None when the stack was not previewed (it has an error, or could not be read)."""
    cost: Breakdown | None = None
    findings: tuple[ReviewItem, ...] = ()
    steps: Mapping[str, Step] = field(default_factory=dict)
    """Pulumi's own verdict per URN (head side read from `pulumi preview --json`)."""
    figures: Mapping[str, Figure] = field(default_factory=dict)
    """The plan's money figures (plan/figures.py); empty when the side carries no plan."""


@dataclass(frozen=True, slots=True)
class FigureChange:
    """A plan figure that differs between the sides (None: unknown or absent on that side)."""

    name: str
    unit: str
    before: Decimal | None
    after: Decimal | None


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    before: Any
    after: Any
    effect: str
    """update, replace, refresh, may-replace or unknown."""
    reason: str | None = None
    """Source id of the rule that says so, or 'pulumi'."""


@dataclass(frozen=True, slots=True)
class ResourceDiff:
    stack: str
    type: str
    name: str
    action: str
    """create, delete, update, replace, or same (inputs equal; only its cost moved, e.g. by usage)."""
    component: str = ""
    changes: tuple[Change, ...] = ()
    before: Decimal | None = None
    after: Decimal | None = None

    @property
    def delta(self) -> Decimal | None:
        before = Decimal(0) if self.action == "create" else self.before
        after = Decimal(0) if self.action == "delete" else self.after
        return None if before is None or after is None else after - before

    @property
    def replaces(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.effect in (REPLACE, MAY_REPLACE))


@dataclass(frozen=True)
class StackDiff:
    stack: str
    status: str
    """changed, unchanged, added (only in head), removed (only in base), or not-previewed (a side has no graph:
    an error finding stopped its preview; resources and cost are not compared)."""
    resources: tuple[ResourceDiff, ...]
    before: Breakdown | None
    after: Breakdown | None
    new_findings: tuple[ReviewItem, ...]
    resolved_findings: tuple[ReviewItem, ...]
    head_findings: tuple[ReviewItem, ...]
    figures: tuple[FigureChange, ...] = ()
    losses: tuple[DataLoss, ...] = ()
    """Replacements and deletions of resources that hold data (review/stateful.py)."""
    graphs: tuple[Graph | None, Graph | None] = (None, None)
    """The base's and the head's graphs (for the picture of a changed stack)."""
    not_judged: str | None = None
    """Why the head was not judged (it could not be read or previewed); None when it was, or is not there."""
    unjudged_findings: tuple[ReviewItem, ...] = ()
    """The base's findings the head does not repeat because it was not judged: not resolved, only unknown."""

    def total(self, side: str, which: str = "monthly") -> Decimal | None:
        """The side's cost; zero when the stack is not on that side (added, removed), None (unknown) when it is
        but was not priced (not previewed, or unreadable)."""
        b = self.before if side == "before" else self.after
        if b is not None:
            return getattr(b, which)  # type: ignore[no-any-return]
        absent = self.status == ("added" if side == "before" else "removed")
        return Decimal(0) if absent else None

    @property
    def delta(self) -> Decimal | None:
        return _minus(self.total("after"), self.total("before"))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.resources:
            out[r.action] = out.get(r.action, 0) + 1
        return out


@dataclass(frozen=True)
class Diff:
    stacks: tuple[StackDiff, ...]

    def total(self, side: str, which: str = "monthly") -> Decimal | None:
        """The sum over stacks; unknown when any stack's is."""
        values = [s.total(side, which) for s in self.stacks]
        return None if any(v is None for v in values) else sum((v for v in values if v is not None), Decimal(0))

    @property
    def delta(self) -> Decimal | None:
        return _minus(self.total("after"), self.total("before"))

    @property
    def losses(self) -> list[DataLoss]:
        return [loss for s in self.stacks for loss in s.losses]


def _minus(after: Decimal | None, before: Decimal | None) -> Decimal | None:
    return None if after is None or before is None else after - before


def relevant(r: Resource) -> bool:
    """Resources a reviewer compares: custom resources and providers (components and the stack have no state)."""
    return r.custom and r.type != STACK_TYPE


def index(graph: Graph | None) -> dict[str, Resource]:
    """Resources by type::name; on a clash (same type and name under different parents) by URN tail."""
    out: dict[str, Resource] = {}
    clashes: list[Resource] = []
    for r in graph.resources if graph else ():
        if not relevant(r):
            continue
        if r.key in out:
            clashes += [out.pop(r.key), r]
        else:
            out[r.key] = r
    for r in clashes:
        out[r.urn.split("::", 2)[-1]] = r
    return out


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """A list of {key, value...} entries (tags) by key, so an inserted tag does not shift the others."""
    if not all(isinstance(i, dict) and isinstance(i.get("key"), str) for i in items):
        return None
    keyed = {i["key"]: i for i in items}
    return keyed if len(keyed) == len(items) else None


def walk(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Leaf paths where two input trees differ: 'a.b[2].c', tags by key: 'tags[team].value'."""
    if before == after:
        return
    if isinstance(before, list) and isinstance(after, list) and before and after:
        old, new = _keyed(before), _keyed(after)
        if old is not None and new is not None:
            for key in sorted(old.keys() | new.keys()):
                yield from walk(old.get(key, MISSING), new.get(key, MISSING), f"{path}[{key}]")
            return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            if key not in IGNORED:
                yield from walk(before.get(key, MISSING), after.get(key, MISSING), f"{path}.{key}" if path else key)
    elif isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            yield from walk(
                before[i] if i < len(before) else MISSING, after[i] if i < len(after) else MISSING, f"{path}[{i}]"
            )
    elif not (before == SECRET and after == SECRET):
        yield path, before, after


def changes(old: Resource, new: Resource, rules: Replacements, step: Step | None = None) -> tuple[Change, ...]:
    """Property changes of a resource, each with its effect (Pulumi's replaceReasons win when present)."""
    pulumi_replaces = set(step.replace_reasons) if step else set()
    detailed = step.detailed if step else {}
    out = []
    for path, before, after in walk(old.inputs, new.inputs):
        top = path.split(".", 1)[0].split("[", 1)[0]
        if top in pulumi_replaces or detailed.get(path, "").endswith("-replace"):
            out.append(Change(path, before, after, REPLACE, PULUMI))
            continue
        if top in new.ignore_changes:
            continue  # Pulumi's ignoreChanges: the engine does not diff it (a derived name, training/pcs.py)
        effect, reason = rules.effect(new.type, path, before, after, new.inputs)
        out.append(Change(path, before, after, effect, reason))
    return tuple(out)


def _action(step: Step | None, found: tuple[Change, ...]) -> str:
    if step is not None and step.op in ("create", "delete", "update", "replace", "same"):
        return step.op
    if any(c.effect == REPLACE for c in found):
        return "replace"
    return "update" if found else "same"


def _same_priced(base: Snapshot | None, head: Snapshot | None) -> bool:
    """Both sides hold the very same graph priced the very same (a stack whose inputs did not change, read once
    from the per-stack cache, gpuinfra.commands.stack_cache) and the head carries no engine steps: every
    resource is the same at the same cost, so there is nothing to compare."""
    return (
        base is not None and head is not None and base.graph is head.graph and base.cost is head.cost and not head.steps
    )


def _resource_diffs(
    name: str, base: Snapshot | None, head: Snapshot | None, rules: Replacements
) -> tuple[list[ResourceDiff], list[DataLoss]]:
    """Each resource of either graph compared by key: created, deleted, replaced, updated or, at a changed
    cost, the same; and the data each replace or delete destroys."""
    old, new = index(base.graph if base else None), index(head.graph if head else None)
    before_cost = base.cost if base else None
    after_cost = head.cost if head else None
    steps = head.steps if head else {}
    out: list[ResourceDiff] = []
    losses: list[DataLoss] = []

    def cost(b: Breakdown | None, key: str) -> tuple[Decimal | None, str]:
        found = b.get(key) if b else None
        return (found.monthly, found.component) if found else (None, "")

    for key in sorted(old.keys() | new.keys()):
        o, n = old.get(key), new.get(key)
        step = steps.get(n.urn if n else o.urn if o else "")  # type: ignore[union-attr]
        before, comp_b = cost(before_cost, key)
        after, comp_a = cost(after_cost, key)
        r = n or o
        assert r is not None
        if o is None:
            out.append(ResourceDiff(name, r.type, r.name, "create", comp_a, (), None, after))
            continue
        if n is None:
            action = "delete"
            out.append(ResourceDiff(name, r.type, r.name, action, comp_b, (), before, None))
        else:
            found = changes(o, n, rules, step) if o.inputs != n.inputs else ()
            action = _action(step, found)
            if action != "same" or before != after:
                out.append(ResourceDiff(name, r.type, r.name, action, comp_a or comp_b, found, before, after))
        loss = data_loss(name, action, r.type, r.name, o.inputs, o.protect)
        if loss is not None:
            losses.append(loss)
    return out, losses


def finding_changes(
    base: Mapping[tuple[str, str, str, str], ReviewItem], head: Mapping[tuple[str, str, str, str], ReviewItem]
) -> tuple[tuple[ReviewItem, ...], tuple[ReviewItem, ...]]:
    """(new, resolved) findings by key. A finding on both sides by the same rule at the same place whose message
    changed (a figure in it moved: "at least $81,903.55" -> "$122,123.71") is neither: it still holds, and calling
    the old text resolved would be false. Paired one to one per (stack, rule, where)."""
    added = [f for k, f in head.items() if k not in base]
    gone = [f for k, f in base.items() if k not in head]
    return _unpaired(added, gone), _unpaired(gone, added)


def _unpaired(items: list[ReviewItem], others: list[ReviewItem]) -> tuple[ReviewItem, ...]:
    """`items` with no counterpart in `others` by (stack, rule, where), one counterpart each."""
    left = Counter((f.stack, f.rule, f.where) for f in others)
    out = []
    for f in items:
        place = (f.stack, f.rule, f.where)
        if left[place] > 0:
            left[place] -= 1
        else:
            out.append(f)
    return tuple(out)


def diff_stack(base: Snapshot | None, head: Snapshot | None, rules: Replacements) -> StackDiff:
    name = (head or base).stack  # type: ignore[union-attr]
    base_f = {f.key: f for f in (base.findings if base else ())}
    head_f = {f.key: f for f in (head.findings if head else ())}
    findings = (*finding_changes(base_f, head_f), tuple(head_f.values()))  # new, resolved, head's
    if head is not None and head.graph is None:
        # A head that was not previewed was not judged: the base's findings it lacks are unknown, never resolved.
        return StackDiff(
            name,
            "not-previewed",
            (),
            None,
            None,
            findings[0],
            (),
            findings[2],
            figures=figure_changes(base, head),
            not_judged=not_judged_reason(head),
            unjudged_findings=findings[1],
        )
    if base is not None and base.graph is None:
        return StackDiff(name, "not-previewed", (), None, None, *findings, figures=figure_changes(base, head))
    before_cost = base.cost if base else None
    after_cost = head.cost if head else None
    out, losses = ([], []) if _same_priced(base, head) else _resource_diffs(name, base, head, rules)
    figures = figure_changes(base, head)
    status = (
        "added"
        if base is None
        else "removed"
        if head is None
        else "changed"
        if out or base_f.keys() != head_f.keys() or figures
        else "unchanged"
    )
    return StackDiff(
        name,
        status,
        tuple(out),
        before_cost,
        after_cost,
        *findings,
        figures=figures,
        losses=tuple(losses),
        graphs=(base.graph if base else None, head.graph if head else None),
    )


def not_judged_reason(head: Snapshot) -> str:
    """Why a head has no graph: the blocking findings that stopped its preview, else it could not be read."""
    stopping = [f for f in head.findings if f.blocking]
    if not stopping:
        return "its head could not be read or previewed, so no policy, preflight or cost judged it"
    named = "; ".join(f"{f.rule}" + (f" ({f.where})" if f.where else "") for f in stopping[:3])
    more = f" and {len(stopping) - 3} more" if len(stopping) > 3 else ""
    return (
        f"its head's preview stopped at {len(stopping)} blocking finding{'s' if len(stopping) != 1 else ''} "
        f"({named}{more}), so no policy, preflight or cost judged it"
    )


def figure_changes(base: Snapshot | None, head: Snapshot | None) -> tuple[FigureChange, ...]:
    """Plan figures whose value differs between the sides, in the head's order."""
    old = base.figures if base else {}
    new = head.figures if head else {}
    out = []
    for name in [*new, *(n for n in old if n not in new)]:
        o, n = old.get(name), new.get(name)
        if (o.value if o else None) != (n.value if n else None):
            out.append(FigureChange(name, (n or o).unit, o.value if o else None, n.value if n else None))  # type: ignore[union-attr]
    return tuple(out)


def diff_sides(base: Mapping[str, Snapshot], head: Mapping[str, Snapshot], rules: Replacements) -> Diff:
    """Every stack of either side, by name."""
    return Diff(tuple(diff_stack(base.get(s), head.get(s), rules) for s in sorted(base.keys() | head.keys())))


__all__ = [
    "BLOCKING",
    "MISSING",
    "PULUMI",
    "Change",
    "Diff",
    "FigureChange",
    "ResourceDiff",
    "ReviewItem",
    "Snapshot",
    "StackDiff",
    "changes",
    "diff_sides",
    "diff_stack",
    "figure_changes",
    "index",
    "not_judged_reason",
    "walk",
]
