"""The Condition element: the operators our policies use, evaluated against a request context.

IAM User Guide, "IAM JSON policy elements: Condition operators"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html) and
"Creating a condition with multiple context keys or values"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-logic-multiple-context-keys-or-values.html):
- every operator of a Condition block must match (AND), every key under an operator must match (AND), and a key
  matches when the request value equals any of the listed values (OR); a negated operator (StringNotEquals,
  ArnNotLike, ...) matches when the value equals none of them (NOR);
- "If the key that you specify in a policy condition is not present in the request context, the values do not
  match and the condition is false. If the policy condition requires that the key is not matched, such as
  StringNotLike or ArnNotLike, and the right key is not present, the condition is true."
- `...IfExists`: a missing key makes the condition true; `Null`: "true" matches an absent key;
- `ForAnyValue:` / `ForAllValues:` compare a multivalued key: any request value matches / every request value
  matches (true for an empty or absent key).

A request whose context is not complete (the pack's probe, which knows the caller but not the request it will
make) leaves a condition on a key it does not hold undecided (None): it may match or not, so a statement that
needs it is neither counted nor dropped, and the decision says it cannot judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpuinfra.preflight.access.match import like

ContextValue = str | Sequence[str]
Context = Mapping[str, ContextValue]


class UnsupportedCondition(ValueError):
    """An operator the evaluator does not implement: the statement's outcome is unknown, never guessed."""


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _arn_like(pattern: str, value: str) -> bool:
    """ArnLike: each of the six colon-separated components is matched on its own (wildcards stay within one)."""
    want, have = pattern.split(":", 5), value.split(":", 5)
    return len(want) == len(have) == 6 and all(like(w, h) for w, h in zip(want, have, strict=True))


Compare = Callable[[str, str], bool]
_POSITIVE: dict[str, Compare] = {
    "StringEquals": lambda p, v: p == v,
    "StringEqualsIgnoreCase": lambda p, v: p.lower() == v.lower(),
    "StringLike": lambda p, v: like(p, v),
    "ArnEquals": lambda p, v: p == v,
    "ArnLike": _arn_like,
    "Bool": lambda p, v: p.lower() == v.lower(),
    "NumericEquals": lambda p, v: float(p) == float(v),
    "NumericLessThan": lambda p, v: float(v) < float(p),
    "NumericLessThanEquals": lambda p, v: float(v) <= float(p),
    "NumericGreaterThan": lambda p, v: float(v) > float(p),
    "NumericGreaterThanEquals": lambda p, v: float(v) >= float(p),
}
_NEGATED: dict[str, str] = {
    "StringNotEquals": "StringEquals",
    "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
    "NumericNotEquals": "NumericEquals",
}


def _values(value: Any) -> list[str]:
    items = value if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else [value]
    return [_text(v) for v in items]


def _request_values(context: Context, key: str) -> list[str] | None:
    """Context keys are case-insensitive (IAM UG, "AWS global condition context keys")."""
    for k, v in context.items():
        if k.lower() == key.lower():
            return [v] if isinstance(v, str) else list(v)
    return None


def _single(operator: str, key: str, wanted: list[str], context: Context, complete: bool = True) -> bool | None:
    qualifier, _, op = operator.rpartition(":")
    if_exists = op.endswith("IfExists")
    op = op.removesuffix("IfExists")
    have = _request_values(context, key)
    negated = op in _NEGATED
    compare = _POSITIVE.get(_NEGATED.get(op, op))
    if compare is None and op != "Null":
        raise UnsupportedCondition(f"condition operator {operator} is not evaluated offline")
    if op.startswith("Numeric"):
        _numbers(operator, key, wanted)
    if have is None and not complete:
        return None
    if op == "Null" or compare is None:
        return (have is None) == (wanted[0].lower() == "true")
    if have is None:
        return if_exists or negated or qualifier == "ForAllValues"

    def hit(value: str) -> bool:
        try:
            return any(compare(p, value) for p in wanted)
        except ValueError as exc:  # a Numeric operator on a value that is not a number
            raise UnsupportedCondition(f"condition {operator} on {key}: {exc}") from None

    if qualifier == "ForAllValues":
        found = all(hit(v) for v in have)
        return not found if negated else found
    found = any(hit(v) for v in have)
    return not found if negated else found


def _numbers(operator: str, key: str, wanted: list[str]) -> None:
    for value in wanted:
        try:
            float(value)
        except ValueError:
            raise UnsupportedCondition(f"condition {operator} on {key}: {value!r} is not a number") from None


def condition_state(condition: Mapping[str, Any] | None, context: Context, complete: bool = True) -> bool | None:
    """Whether every operator and key of the Condition block matches: True, False, or None when it turns on a
    key an incomplete context does not hold (and nothing else already makes it false)."""
    if not condition:
        return True
    if not isinstance(condition, Mapping):
        raise UnsupportedCondition(f"a Condition that is not an object ({type(condition).__name__})")
    states: list[bool | None] = []
    unsupported: list[UnsupportedCondition] = []
    for operator, block in condition.items():
        if not isinstance(block, Mapping):
            unsupported.append(UnsupportedCondition(f"condition operator {operator} does not hold an object of keys"))
            continue
        for key, wanted in block.items():
            try:
                states.append(_single(str(operator), str(key), _values(wanted), context, complete))
            except UnsupportedCondition as exc:
                unsupported.append(exc)
    if any(state is False for state in states):
        return False  # one key that does not match decides, whatever the others are
    if unsupported:
        raise unsupported[0]
    return None if any(state is None for state in states) else True


def condition_matches(condition: Mapping[str, Any] | None, context: Context) -> bool:
    """True when every operator and every key of the Condition block matches the (complete) request context."""
    return condition_state(condition, context) is True


def open_keys(condition: Mapping[str, Any] | None, context: Context) -> list[str]:
    """The condition keys of a block that `context` does not hold: what a request would have to set."""
    if not isinstance(condition, Mapping):
        return []
    keys = [str(k) for block in condition.values() if isinstance(block, Mapping) for k in block]
    return sorted({k for k in keys if _request_values(context, k) is None})


__all__ = ["Context", "ContextValue", "UnsupportedCondition", "condition_matches", "condition_state", "open_keys"]
