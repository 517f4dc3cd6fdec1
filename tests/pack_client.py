"""The Pulumi engine's side of the analyzer protocol, for tests: start the pack as the engine does and
talk to it over gRPC with the messages of `pulumi.runtime.proto`.

The engine runs `policies/__main__.py` with the project's virtualenv python, in the pack's directory,
with the stack's config in PULUMI_CONFIG (and PULUMI_PROJECT, PULUMI_STACK, PULUMI_DRY_RUN); the pack
prints the port of its gRPC server. Properties travel as protobuf Structs: every number becomes a float.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from gpuinfra.graph import Graph, Resource
from gpuinfra.policy.pack import PolicyConfig, PolicyMeta
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
PACK_DIR = ROOT / "policies"
LEVEL_TO_PROTO = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "disabled": analyzer_pb2.DISABLED,
    "remediate": analyzer_pb2.REMEDIATE,
}
PROTO_TO_LEVEL = {v: k for k, v in LEVEL_TO_PROTO.items()}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A violation as the engine sees it (the analyzed resource's URN when the pack names none)."""

    policy: str
    level: str
    urn: str
    message: str


def struct(values: Mapping[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(dict(values))
    return out


@contextmanager
def running_pack(stack: str, config: Mapping[str, str], project: str = "gpuinfra") -> Iterator[PackClient]:
    """Start the pack like the engine: venv python, cwd = the pack, stack config in the environment.

    PYTHONPATH names this checkout so the pack imports this worktree's `gpuinfra` and `policies` (the shared
    virtualenv's editable install points at the main checkout)."""
    env = {
        **os.environ,
        "PULUMI_CONFIG": json.dumps(dict(config)),
        "PULUMI_PROJECT": project,
        "PULUMI_STACK": stack,
        "PULUMI_DRY_RUN": "true",
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [sys.executable, "-u", str(PACK_DIR / "__main__.py")],
        cwd=PACK_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.isdigit():
            process.kill()
            errors = process.stderr.read() if process.stderr else ""
            raise RuntimeError(f"the pack did not print a port: {line!r}\n{errors}")
        with grpc.insecure_channel(f"127.0.0.1:{line}") as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            yield PackClient(analyzer_pb2_grpc.AnalyzerStub(channel))
    finally:
        process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


class PackClient:
    def __init__(self, stub: analyzer_pb2_grpc.AnalyzerStub) -> None:
        self.stub = stub

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        return self.stub.GetAnalyzerInfo(empty_pb2.Empty())

    def metas(self) -> list[PolicyMeta]:
        """What GetAnalyzerInfo says about each policy, in the shape the config reconciler takes."""
        out = []
        for p in self.info().policies:
            schema = json_format.MessageToDict(p.configSchema)
            out.append(
                PolicyMeta(
                    p.name,
                    PROTO_TO_LEVEL[p.enforcementLevel],
                    schema.get("properties", {}),
                    tuple(schema.get("required", ())),
                )
            )
        return out

    def configure(self, config: Mapping[str, PolicyConfig]) -> None:
        self.stub.Configure(
            analyzer_pb2.ConfigureAnalyzerRequest(
                policyConfig={
                    name: analyzer_pb2.PolicyConfig(
                        enforcementLevel=LEVEL_TO_PROTO[c.level], properties=struct(c.properties)
                    )
                    for name, c in config.items()
                }
            )
        )

    def analyze_graph(self, graph: Graph) -> tuple[list[Diagnostic], list[tuple[str, str]]]:
        """Analyze every resource, then AnalyzeStack; the diagnostics and the not-applicable records."""
        diagnostics: list[Diagnostic] = []
        not_applicable: list[tuple[str, str]] = []
        for resource in graph.resources:
            response = self.stub.Analyze(
                analyzer_pb2.AnalyzeRequest(
                    type=resource.type,
                    properties=struct(resource.inputs),
                    urn=resource.urn,
                    name=resource.name,
                    options=analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent or ""),
                    provider=_provider(graph, resource),
                )
            )
            diagnostics += [_diagnostic(d, resource.urn) for d in response.diagnostics]
            not_applicable += [(n.policy_name, n.reason) for n in response.not_applicable]
        response = self.stub.AnalyzeStack(
            analyzer_pb2.AnalyzeStackRequest(
                resources=[
                    analyzer_pb2.AnalyzerResource(
                        type=r.type,
                        properties=struct(r.inputs),
                        urn=r.urn,
                        name=r.name,
                        options=analyzer_pb2.AnalyzerResourceOptions(parent=r.parent or ""),
                        provider=_provider(graph, r),
                        parent=r.parent or "",
                        dependencies=list(r.dependencies),
                    )
                    for r in graph.resources
                ]
            )
        )
        diagnostics += [_diagnostic(d, "") for d in response.diagnostics]
        not_applicable += [(n.policy_name, n.reason) for n in response.not_applicable]
        return diagnostics, not_applicable


def _provider(graph: Graph, resource: Resource) -> analyzer_pb2.AnalyzerProviderResource | None:
    provider = graph.provider_of(resource)
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, properties=struct(provider.inputs), urn=provider.urn, name=provider.name
    )


def _diagnostic(d: analyzer_pb2.AnalyzeDiagnostic, analyzed: str) -> Diagnostic:
    return Diagnostic(d.policyName, PROTO_TO_LEVEL[d.enforcementLevel], d.urn or analyzed, d.message)


__all__ = ["Diagnostic", "PackClient", "running_pack", "struct"]
