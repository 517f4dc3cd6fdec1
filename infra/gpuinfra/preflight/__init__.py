"""Preflight: every resource of the graph judged by AWS's and Kubernetes' own published definitions.

`preflight(graph, catalog)` returns findings (rule id, resource, property path, value, rule, source):
what AWS would refuse (botocore service models, CloudFormation schemas), what Kubernetes would reject
or prune (its OpenAPI schema), and documented rules those models cannot express. It reads only the
graph and the catalog, never the Pulumi SDK.
"""

from __future__ import annotations

from gpuinfra.preflight.check import preflight
from gpuinfra.preflight.findings import PreflightFinding
from gpuinfra.preflight.rules import RULES
from gpuinfra.preflight.table import AWS

__all__ = ["AWS", "RULES", "PreflightFinding", "preflight"]
