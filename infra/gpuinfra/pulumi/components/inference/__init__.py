"""The inference fleet: per-region networks, load balancers and replicas, and global routing."""
