"""Property values as the graph keeps them, whoever recorded them (the embedded engine's protobuf-decoded
inputs, or a real `pulumi preview --json` / stack export state): secrets blinded, resource references as
URNs, assets named, Pulumi's `__defaults` bookkeeping dropped, integral floats as ints (protobuf carries
every number as a double). One function for both, so graphs from Pulumi and from the engine compare
property by property."""

from __future__ import annotations

from typing import Any

from gpuinfra.graph.model import SECRET

SIG = "4dabf18193072939515e22adb298388d"
"""The key of Pulumi's special-value signature (pulumi sdk/go/common/resource/sig)."""
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
DEFAULTS = "__defaults"


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        sig = value.get(SIG)
        if sig == SECRET_SIG:
            return SECRET
        if sig == RESOURCE_SIG:
            return value.get("urn", "")
        if sig is not None:
            return f"<asset {value.get('hash', '')}>".replace(" >", ">")
        return {k: plain(v) for k, v in value.items() if k != DEFAULTS}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


__all__ = ["DEFAULTS", "RESOURCE_SIG", "SECRET_SIG", "SIG", "plain"]
