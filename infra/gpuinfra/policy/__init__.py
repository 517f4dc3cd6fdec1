"""The policy stage: gpuinfra's CrossGuard pack (rules/), the facts it reads besides the graph (facts.py), and
an in-process runner with the Pulumi CLI's semantics (runner.py, config.py) that `gpuinfra preview` uses.
`policies/` at the project root is only the pack directory `pulumi preview --policy-pack` loads."""
