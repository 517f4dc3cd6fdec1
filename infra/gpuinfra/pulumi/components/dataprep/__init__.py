"""The data preparation workload: the datatrove pipeline, its cluster (PCS or KubeRay) and its buckets."""
