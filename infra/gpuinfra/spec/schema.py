"""JSON Schema of stack files, the organization file and intent files, for editors (yaml-language-server)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from gpuinfra.spec import NAMESPACE, ORG_KEY, SPEC_MODELS, Organization
from gpuinfra.spec.docs import DocumentedSchema
from gpuinfra.spec.intent import INTENT_KEY, IntentSpec
from gpuinfra.spec.target import cloud_workload_models

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def stack_schema() -> dict[str, Any]:
    """A Pulumi stack file whose config holds exactly one gpuinfra spec."""
    others = cloud_workload_models()
    every = [*SPEC_MODELS.values(), *(m for ms in others.values() for m in ms)]
    models: list[tuple[type[BaseModel], Literal["validation"]]] = [(m, "validation") for m in every]
    refs, top = models_json_schema(models, ref_template="#/$defs/{model}", schema_generator=DocumentedSchema)

    def spec_schema(workload: str, model: type[BaseModel]) -> dict[str, Any]:
        own = refs[(model, "validation")]
        clouds = [refs[(m, "validation")] for m in others.get(workload, [])]
        return {"anyOf": [own, *clouds]} if clouds else dict(own)

    spec_keys = {f"{NAMESPACE}:{w}": spec_schema(w, m) for w, m in SPEC_MODELS.items()}
    return {
        "$schema": SCHEMA_DRAFT,
        "title": "gpuinfra stack file (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "config": {
                "type": "object",
                "description": "Pulumi stack config; the spec lives under exactly one gpuinfra key.",
                "properties": {
                    **spec_keys,
                    ORG_KEY: {
                        "type": "string",
                        "description": "Only the trusted organization file (normally omitted): a stack naming "
                        "another is refused.",
                    },
                },
                "oneOf": [{"required": [key]} for key in spec_keys],
            },
            # Pulumi's own stack-file keys (pulumi/pulumi sdk/go/common/workspace/project.go, ProjectStack).
            "secretsprovider": {"type": "string", "description": "Pulumi: the stack's secrets provider URL."},
            "encryptedkey": {"type": "string", "description": "Pulumi: the data key, encrypted by a cloud KMS."},
            "encryptionsalt": {
                "type": "string",
                "description": "Pulumi: the passphrase secrets provider's salt; written by Pulumi, never by hand.",
            },
            "environment": {"description": "Pulumi ESC environments the stack imports."},
        },
        "required": ["config"],
        "$defs": top.get("$defs", {}),
    }


def intent_schema() -> dict[str, Any]:
    """An intent file (docs/advise.md): one key, `gpuinfra:intent`."""
    spec = IntentSpec.model_json_schema(ref_template="#/$defs/{model}", schema_generator=DocumentedSchema)
    defs = spec.pop("$defs", {})
    return {
        "$schema": SCHEMA_DRAFT,
        "title": "gpuinfra intent file (gpuinfra advise INTENT)",
        "type": "object",
        "additionalProperties": False,
        "properties": {INTENT_KEY: spec},
        "required": [INTENT_KEY],
        "$defs": defs,
    }


def org_schema() -> dict[str, Any]:
    schema = Organization.model_json_schema(ref_template="#/$defs/{model}", schema_generator=DocumentedSchema)
    return {"$schema": SCHEMA_DRAFT, "title": "gpuinfra organization file (stacks/org.yaml)", **schema}


__all__ = ["intent_schema", "org_schema", "stack_schema"]
