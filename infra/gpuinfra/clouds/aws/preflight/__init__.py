"""AWS's preflight part (the registry's `preflight` for the aws and aws-native packages): each pulumi-aws
resource judged by the botocore model of the request its provider sends (table.py, requests/), each
pulumi-aws-native resource by its CloudFormation schema, and the graph by the documented rules those models
cannot express (rules/). `table` is the module a type preflight does not judge is missing from (PF-UNCHECKED cites
it)."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight import table
from gpuinfra.clouds.aws.preflight.judge import RULES, check, judges

__all__ = ["RULES", "check", "judges", "table"]
