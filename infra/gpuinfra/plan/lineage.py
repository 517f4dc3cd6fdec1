"""Lineage of a fine-tuning run: the manifest every run writes beside its adapter, so an adapter found weeks later
names the base, the data, the configuration and the image that made it.

The job receives the manifest's fixed fields as GPUINFRA_MANIFEST (JSON); it adds `run` (its AWS Batch job id,
AWS_BATCH_JOB_ID, or the Kubernetes Job's name) and writes `<adapter uri><run>/lineage.json` with a conditional
create (S3 PutObject with `If-None-Match: *`): the registry's bucket policy refuses any other write of a manifest,
so a manifest, once written, cannot be overwritten (components/registry/policies.py).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gpuinfra.spec import FinetuneSpec

MANIFEST_NAME = "lineage.json"
"""Not manifest.json: that name is the file list a served prefix is verified against (inference prefetch)."""
MANIFEST_SCHEMA = "gpuinfra.finetune.manifest/v1"


def spec_sha256(spec: FinetuneSpec) -> str:
    """SHA-256 of the spec's canonical JSON (sorted keys, no whitespace): the same configuration always hashes the
    same, whatever the YAML's layout or comments."""
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_manifest(spec: FinetuneSpec, stack: str) -> dict[str, Any]:
    """The fields every run's manifest carries before the run adds its own id."""
    return {
        "schema": MANIFEST_SCHEMA,
        "stack": stack,
        "base_model": {
            "name": spec.base_model.name,
            "weights_prefix": spec.base_model.weights_prefix,
            "version": spec.base_model.version,
        },
        "method": spec.method,
        "lora": {"rank": spec.lora.rank, "alpha": spec.lora.alpha, "target_modules": list(spec.lora.target_modules)},
        "dataset": {"uri": spec.dataset.uri, "version": spec.dataset.version},
        "eval_set": {"uri": spec.eval_set.uri, "version": spec.eval_set.version},
        "spec_sha256": spec_sha256(spec),
        "image": spec.image,
        "image_digest": spec.image.rpartition("@")[2],
    }


__all__ = ["MANIFEST_NAME", "MANIFEST_SCHEMA", "run_manifest", "spec_sha256"]
