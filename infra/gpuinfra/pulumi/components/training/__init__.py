"""The training cluster on AWS: network, storage, compute and the Slurm scheduler."""

from gpuinfra.pulumi.components.training.cluster import ClusterArgs, TrainingCluster

__all__ = ["ClusterArgs", "TrainingCluster"]
