"""What the organization holds besides the stack under review, as plain data (`AccountFacts`): folded once by
the workspace (gpuinfra.workspace), read by the judges (policy, preflight's flows) without reading a file."""

from gpuinfra.account.facts import AccountFacts, StackTotal

__all__ = ["AccountFacts", "StackTotal"]
