"""The resource graph: what a Pulumi program registers, as plain data, and the views every later stage reads.

The engine produces it in-process; `readers` reads real `pulumi preview --json`, `pulumi stack export` and
engine event logs into the same shape. Policies, preflight, cost, diff and the report read only this,
never the Pulumi SDK.
"""

from gpuinfra.graph.model import SECRET, STACK_TYPE, UNKNOWN, Graph, Resource, is_known, judgeable

__all__ = ["SECRET", "STACK_TYPE", "UNKNOWN", "Graph", "Resource", "is_known", "judgeable"]
