"""Run a Pulumi program in-process under Pulumi's mocks and record the resource graph.

This is how gpuinfra previews without the Pulumi CLI or provider plugins: the same program `pulumi up`
runs registers its resources with a mock monitor that records every registration (type, name,
inputs, parent, provider, dependencies). It is an engine for preview and tests, never a replacement
for `pulumi up`: nothing here talks to a cloud.

Traps handled (see shared/reference/pulumi-inprocess.md): mocks do no autonaming (filled here with a
stable hash), provider references need ids, runs in one process need a fresh root and event loop,
registration order is nondeterministic (the graph is sorted), numbers arrive as floats.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pulumi
import pulumi.runtime
import pulumi.runtime.settings
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks

from .errors import GpuinfraError
from .graph import SECRET, STACK_TYPE, Graph, Resource

_SIG = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_RUN_LOCK = threading.Lock()


class EngineError(GpuinfraError):
    """The program failed while registering resources (its message says why)."""


def plain(value: Any) -> Any:
    """Protobuf-decoded values as JSON: secrets blinded, references as URNs, integral floats as ints."""
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig == _SECRET_SIG:
            return SECRET
        if sig == _RESOURCE_SIG:
            return value.get("urn", "")
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def short_hash(*parts: str, length: int = 8) -> str:
    """Stable across runs and processes (unlike hash())."""
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:length]


class _Recorder(pulumi_mocks.MockMonitor):
    """The mock monitor, recording every registration and building URNs the way the engine does."""

    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.records: list[Resource] = []
        self._lock = threading.Lock()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The real engine qualifies a type with its ancestors' types, but not with the root stack's.
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != STACK_TYPE:
                type_ = f"{parent_type}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        inputs = plain(json_format.MessageToDict(request.object)) if request.type != STACK_TYPE else {}
        record = Resource(
            urn=response.urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
            custom=bool(request.custom),
            dependencies=tuple(sorted(set(request.dependencies))),
            inputs=inputs,
        )
        with self._lock:
            self.records.append(record)
        return response


# Output properties the program reads back, per resource type (besides id and arn).
_ARN_SERVICE = {
    "aws:s3/bucket:Bucket": "s3",
    "aws:iam/role:Role": "iam",
    "aws:iam/instanceProfile:InstanceProfile": "iam",
}


class _Mocks(pulumi_mocks.Mocks):
    """Deterministic stand-ins for what providers would return: ids, ARNs, autonamed names."""

    def __init__(self) -> None:
        self._providers: dict[str, tuple[str, str]] = {}

    def call(self, args: pulumi_mocks.MockCallArgs) -> Any:
        return {}

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        digest = short_hash(typ, name, length=17)
        if typ.startswith("pulumi:providers:"):
            account = json.loads(inputs.get("allowedAccountIds", '["000000000000"]') or "[]") or ["000000000000"]
            self._providers[f"{pulumi.get_stack()}::{name}"] = (inputs.get("region", "us-east-1"), account[0])
            return f"{name}-{digest[:8]}", inputs
        region, account = self._provider_context(args.provider)
        physical = f"{name}-{digest[:7]}"
        state = dict(inputs)
        state.setdefault("name", physical)
        module = typ.split(":")[1].split("/")[0] if ":" in typ else "x"
        resource_id = _resource_id(typ, physical, digest)
        if typ == "aws:s3/bucket:Bucket":
            bucket = state.setdefault("bucket", physical)
            state.setdefault("arn", f"arn:aws:s3:::{bucket}")
            resource_id = bucket
        elif typ == "aws:fsx/lustreFileSystem:LustreFileSystem":
            state.setdefault("dnsName", f"{resource_id}.fsx.{region}.amazonaws.com")
            state.setdefault("mountName", digest[:8])
        elif typ == "aws:lb/loadBalancer:LoadBalancer":
            state.setdefault("dnsName", f"{physical}-{digest[:10]}.{region}.elb.amazonaws.com")
            state.setdefault("zoneId", "Z35SXDOTRQ7X7K")
            state.setdefault("arnSuffix", f"app/{physical}/{digest[:16]}")
        elif typ == "aws:lb/targetGroup:TargetGroup":
            state.setdefault("arnSuffix", f"targetgroup/{physical}/{digest[:16]}")
        elif typ == "aws:globalaccelerator/accelerator:Accelerator":
            state.setdefault("dnsName", f"{digest[:16]}.awsglobalaccelerator.com")
        elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
            state.setdefault("latestVersion", 1)
        elif typ == "aws:kms/key:Key":
            state.setdefault("keyId", resource_id)
        elif typ == "kubernetes:core/v1:Service" and (state.get("spec") or {}).get("type") == "LoadBalancer":
            state.setdefault(
                "status", {"loadBalancer": {"ingress": [{"hostname": f"{digest[:24]}.elb.amazonaws.com"}]}}
            )
        elif typ == "aws:eks/cluster:Cluster":
            state.setdefault("endpoint", f"https://{digest[:16].upper()}.gr7.{region}.eks.amazonaws.com")
            state.setdefault("certificateAuthority", {"data": "LS0tLS1CRUdJTi0tLS0t"})
            vpc_config = dict(state.get("vpcConfig") or {})
            vpc_config.setdefault("clusterSecurityGroupId", f"sg-0{digest[:16]}")
            state["vpcConfig"] = vpc_config
        service = _ARN_SERVICE.get(typ, module)
        arn_region = "" if service in ("iam", "s3") else region  # global services have no region in ARNs
        state.setdefault(
            "arn", f"arn:aws:{service}:{arn_region}:{account}:{typ.rsplit(':', 1)[-1].lower()}/{resource_id}"
        )
        return resource_id, state

    def _provider_context(self, provider_ref: str | None) -> tuple[str, str]:
        if provider_ref:
            urn = provider_ref.rsplit("::", 1)[0]
            key = f"{pulumi.get_stack()}::{urn.rsplit('::', 1)[-1]}"
            if key in self._providers:
                return self._providers[key]
        return "us-east-1", "000000000000"


_ID_PREFIX = {
    "vpc": "vpc",
    "subnet": "subnet",
    "securityGroup": "sg",
    "launchTemplate": "lt",
    "internetGateway": "igw",
    "natGateway": "nat",
    "eip": "eipalloc",
    "routeTable": "rtb",
    "vpcEndpoint": "vpce",
    "lustreFileSystem": "fs",
    "instance": "i",
    "placementGroup": "pg",
    "key": "key",
    "dataRepositoryAssociation": "dra",
}


def _resource_id(typ: str, physical: str, digest: str) -> str:
    kind = typ.rsplit(":", 1)[-1]
    kind = kind[0].lower() + kind[1:]
    prefix = _ID_PREFIX.get(kind)
    return f"{prefix}-0{digest[:16]}" if prefix else physical


class _ErrorLog(logging.Handler):
    """Collects what the program logs at error level (pulumi.log.error) so a run can fail on it."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str],
    secret_keys: tuple[str, ...] = (),
) -> Graph:
    """Run `program` as `pulumi preview` would, under mocks; return the sorted resource graph."""
    with _RUN_LOCK:
        mocks = _Mocks()
        recorder = _Recorder(mocks)
        errors = _ErrorLog()
        logger = logging.getLogger(f"gpuinfra.engine.{stack}")
        logger.propagate = False
        logger.handlers = [errors]
        pulumi.runtime.settings.ROOT.set(None)
        _fresh_event_loop()
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, logger=logger, monitor=recorder)
        pulumi.runtime.set_all_config(dict(config), list(secret_keys))
        try:
            with gc_paused():
                pulumi_mocks.test(program)()
        except GpuinfraError:
            raise
        except Exception as exc:
            raise EngineError(f"the Pulumi program failed for stack {stack}: {type(exc).__name__}: {exc}") from exc
        if errors.messages:
            raise EngineError(f"the Pulumi program reported errors for stack {stack}: " + "; ".join(errors.messages))
        return Graph.of(stack, project, recorder.records)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a run. A mocked run keeps every resource, output and future
    alive, so each automatic collection walks all of them and their number grows with the graph: measured
    on a 40-region fleet, collections were more than half the run and made it superlinear. Reference
    counting still frees what it can; cycles are collected at the next collection after the run."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fresh_event_loop() -> None:
    try:
        loop = asyncio.get_event_loop()
        if not loop.is_closed():
            return
    except RuntimeError:
        pass
    asyncio.set_event_loop(asyncio.new_event_loop())


__all__ = ["EngineError", "gc_paused", "plain", "run", "short_hash"]
