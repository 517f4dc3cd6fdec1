"""pulumi-aws-native resources -> the CloudFormation resource provider schema of their type.

pulumi-aws-native is generated from the CloudFormation registry schemas and sends a resource's inputs
to Cloud Control as the CloudFormation properties (camelCase inputs -> PascalCase properties). cfn-lint
ships those provider schemas (us-east-1 set); the properties are validated with jsonschema (draft 7,
the schemas' dialect): types, enums, required, patterns, additionalProperties. Read-only properties are
outputs and must not be sent.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from gpuinfra.findings import Finding
from gpuinfra.graph import Resource, judgeable
from gpuinfra.preflight.findings import finding_at

PREFIX = "aws-native:"


@cache
def _types() -> dict[tuple[str, str], str]:
    """(module, type) lowercased -> the CloudFormation type name, from cfn-lint's provider index (kept compiled on
    disk: importing cfn-lint to read it costs a fresh process about 2 s)."""
    from gpuinfra.store.disk import cached

    names: dict[str, str] = cached(f"cfn-types|{_schemas_version()}", _read_types)
    out = {}
    for key, full in names.items():
        module, _, name = key.partition("|")
        out[(module, name)] = full
    return out


def _read_types() -> dict[str, str]:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    out = {}
    for name in PROVIDER_SCHEMA_MANAGER.get_resource_types("us-east-1"):
        parts = name.split("::")
        if len(parts) == 3 and parts[0] == "AWS":
            out[f"{parts[1].lower()}|{parts[2].lower()}"] = name
    return out


@cache
def _schemas_version() -> str:
    """What the cached schemas are keyed by: cfn-lint's version and the date stamps of the schemas it reads (the
    bundled set and the one `cfn-lint --update-specs` downloads into its own cache, whichever it prefers)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("cfnlint")
    stamps = [_cfnlint_version()]
    roots = [Path(p) / "data" / "schemas" for p in (spec.submodule_search_locations or [])] if spec else []
    roots.append(Path.home() / ".cache" / "aws" / "cfn-lint" / "schemas")
    for root in roots:
        try:
            stamps.append((root / "version.json").read_text().strip())
        except OSError:
            stamps.append("-")
    return "|".join(stamps)


def cfn_type(token: str) -> str | None:
    """`aws-native:pcs:Cluster` -> `AWS::PCS::Cluster` (None when cfn-lint has no such type)."""
    module, _, name = token.removeprefix(PREFIX).partition(":")
    return _types().get((module.lower(), name.lower()))


@cache
def _schema(type_name: str) -> dict[str, Any]:
    from gpuinfra.store.disk import cached

    return cached(f"cfn-schema|{_schemas_version()}|{type_name}", lambda: _read_schema(type_name))


def _read_schema(type_name: str) -> dict[str, Any]:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    return dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", type_name).schema)


@cache
def _validator(type_name: str) -> Any:
    import jsonschema

    schema = _schema(type_name)
    return jsonschema.Draft7Validator(schema)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        return dict(schema["definitions"][ref.removeprefix("#/definitions/")])
    return node


def properties(value: Any, node: dict[str, Any], schema: dict[str, Any]) -> Any:
    """camelCase inputs -> the schema's property names, matched case-insensitively level by level (how
    pulumi-aws-native names them); names with no match are kept, so additionalProperties reports them."""
    node = _resolve(schema, node)
    if isinstance(value, dict) and "properties" in node:
        names = {p.lower(): p for p in node["properties"]}
        out = {}
        for key, item in value.items():
            name = names.get(key.lower(), key)
            out[name] = properties(item, node["properties"].get(name, {}), schema)
        return out
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [properties(v, node["items"], schema) for v in value]
    return value


def _path(error: Any) -> str:
    """The input path (pulumi-aws-native spells properties camelCase: Networking.SubnetIds -> networking.subnetIds)."""
    out = ""
    for part in error.absolute_path:
        name = str(part)[:1].lower() + str(part)[1:]
        out += f"[{part}]" if isinstance(part, int) else (f".{name}" if out else name)
    return out


def check(resource: Resource) -> list[Finding]:
    type_name = cfn_type(resource.type)
    if type_name is None:
        message = f"no CloudFormation resource type matches {resource.type} in cfn-lint's schemas"
        return [finding_at(resource, "PF-CFN-SCHEMA", "", resource.type, message, "cfn-lint provider schemas")]
    schema = _schema(type_name)
    props = properties(dict(resource.inputs), schema, schema)
    source = f"CloudFormation resource schema {type_name} (cfn-lint {_cfnlint_version()})"
    findings = []
    read_only = {p.removeprefix("/properties/") for p in schema.get("readOnlyProperties", [])}
    for name in sorted(read_only & set(props)):
        message = f"{type_name}: {name} is read-only (an output), not a property to set"
        at = name[:1].lower() + name[1:]
        findings.append(finding_at(resource, "PF-CFN-SCHEMA", at, props[name], message, source))
    for error in sorted(_validator(type_name).iter_errors(props), key=lambda e: list(map(str, e.absolute_path))):
        if not judgeable(error.instance):
            continue
        if error.validator == "required" and any(r in read_only for r in error.validator_value):
            continue
        findings.append(
            finding_at(resource, "PF-CFN-SCHEMA", _path(error), error.instance, f"{type_name}: {error.message}", source)
        )
    return findings


@cache
def _cfnlint_version() -> str:
    from importlib.metadata import version

    return version("cfn-lint")


__all__ = ["PREFIX", "cfn_type", "check", "properties"]
