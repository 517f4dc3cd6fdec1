"""The Pulumi side of a Google training cluster: the fabric, the storage, GKE, and the stack's outline."""
