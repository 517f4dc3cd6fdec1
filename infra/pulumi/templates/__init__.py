"""Node bootstrap (cloud-init), Slurm configuration and Kubernetes object templates (package data)."""

from infra.templating import renderer

render = renderer(__name__.rsplit(".", 1)[0])

__all__ = ["render"]
