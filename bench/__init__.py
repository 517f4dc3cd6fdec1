"""Benchmarks: preview at scale against the Pulumi SDK's own floor (`make bench`, not part of `make test`)."""
