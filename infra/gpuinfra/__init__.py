"""gpuinfra: typed specs of GPU infrastructure compiled into Pulumi stacks, policed and priced."""

__version__ = "0.1.0"
