"""Node bootstrap (cloud-init), Slurm configuration and Kubernetes object templates (top-level `templates/`)."""

from gpuinfra.templating import renderer

render = renderer()

__all__ = ["render"]
