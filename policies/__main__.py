"""What the Pulumi engine runs for `pulumi preview --policy-pack policies`: it only builds the pack.

The pack serves gRPC, prints its port and blocks; the policies live in the importable modules beside
this file. The stack's facts reach them through the environment the engine sets (policies/facts.py).
"""

from pulumi_policy import PolicyPack

from policies import PACK_NAME, POLICIES

PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    description="gpuinfra guardrails: training/inference separation, GPU quotas, budgets and safe defaults",
)
