"""Wildcard matching as IAM defines it for the Action and Resource elements and the *Like operators.

IAM User Guide, "IAM JSON policy elements: Action": action names are case-insensitive and may use `*` and `?`
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html).
"IAM JSON policy elements: Resource": wildcards may appear in any ARN segment but do not span the segments
before the resource part; the resource part (after the fifth colon) is matched as a whole and case-sensitively
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html).
"""

from __future__ import annotations

import re
from functools import lru_cache

ARN_HEAD_SEGMENTS = 5
"""arn:partition:service:region:account: then the resource part, which may itself hold colons."""


@lru_cache(maxsize=4096)
def _pattern(glob: str, ignore_case: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(f"^{body}$", re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def like(glob: str, value: str, ignore_case: bool = False) -> bool:
    """`*` any run of characters (also none), `?` exactly one, everything else literal."""
    return _pattern(glob, ignore_case).match(value) is not None


def action_matches(pattern: str, action: str) -> bool:
    return like(pattern, action, ignore_case=True)


def resource_matches(pattern: str, arn: str) -> bool:
    """`*` alone matches every resource; otherwise segment by segment up to the resource part."""
    if pattern == "*":
        return True
    want = pattern.split(":", ARN_HEAD_SEGMENTS)
    have = arn.split(":", ARN_HEAD_SEGMENTS)
    if len(want) != len(have):
        return False
    return all(like(w, h) for w, h in zip(want, have, strict=True))


__all__ = ["action_matches", "like", "resource_matches"]
