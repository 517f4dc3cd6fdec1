"""The model registry: weights bucket, per-region replicas, replication and cross-account grants."""
