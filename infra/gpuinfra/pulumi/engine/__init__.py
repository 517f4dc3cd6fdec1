"""The embedded engine: runs a Pulumi program in-process under Pulumi's mocks and records the resource graph.
An engine for preview and tests, never a replacement for `pulumi up`."""

from gpuinfra.pulumi.engine.mocks import short_hash
from gpuinfra.pulumi.engine.run import EngineError, engine_settings, run

__all__ = ["EngineError", "engine_settings", "run", "short_hash"]
