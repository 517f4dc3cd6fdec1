"""Google's component tree (pulumi-gcp): imported only when the cloud registry is asked for Google's program."""
