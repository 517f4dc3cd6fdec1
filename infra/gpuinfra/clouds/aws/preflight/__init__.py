"""AWS's preflight part (the registry's `preflight` for the aws and aws-native packages): each pulumi-aws
resource judged by the botocore model of the request its provider sends (table.py, requests/), each
pulumi-aws-native resource by its CloudFormation schema, and the graph by the documented rules those models
cannot express (rules/)."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight.judge import RULES, check, judges

__all__ = ["RULES", "check", "judges"]
