"""AWS's parts of the pack: how a stack's AWS resources read as EC2 quota holdings (quotas.py), asked by the shared
`quota-within-grant` through the cloud registry (the `quota_usage` part), never imported by name."""
