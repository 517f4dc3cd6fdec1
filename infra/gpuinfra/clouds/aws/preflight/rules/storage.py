"""FSx for Lustre and S3 rules: capacity steps and throughput tiers per deployment type, where data
repository associations exist, what replication needs."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.rules.base import Violation, judgeable_number, rule
from gpuinfra.graph import Graph, tokens

LUSTRE = tokens.LUSTRE
FSX_API = (
    "Amazon FSx API Reference, CreateFileSystem.StorageCapacity and "
    "CreateFileSystemLustreConfiguration.PerUnitStorageThroughput"
)

# (deployment type, storage type, throughput or None) -> (first allowed sizes, increment after them), GiB.
# FSx API Reference, CreateFileSystem StorageCapacity: SCRATCH_2, PERSISTENT_2 and PERSISTENT_1 SSD take
# 1,200, 2,400 or increments of 2,400 GiB; SCRATCH_1 1,200, 2,400 or increments of 3,600 GiB; PERSISTENT_1
# HDD increments of 6,000 GiB at 12 MB/s/TiB and 1,800 GiB at 40 MB/s/TiB.
SSD_STEPS = ((1200, 2400), 2400)
CAPACITY = {
    ("SCRATCH_1", "SSD", None): ((1200, 2400), 3600),
    ("SCRATCH_2", "SSD", None): SSD_STEPS,
    ("PERSISTENT_1", "SSD", None): SSD_STEPS,
    ("PERSISTENT_2", "SSD", None): SSD_STEPS,
    ("PERSISTENT_1", "HDD", 12): ((), 6000),
    ("PERSISTENT_1", "HDD", 40): ((), 1800),
}
# CreateFileSystemLustreConfiguration PerUnitStorageThroughput (MB/s/TiB), persistent deployments only.
THROUGHPUT = {
    ("PERSISTENT_1", "SSD"): {50, 100, 200},
    ("PERSISTENT_1", "HDD"): {12, 40},
    ("PERSISTENT_2", "SSD"): {125, 250, 500, 1000},
}


@rule("PF-FSX-CAPACITY", "Lustre storage capacity in the steps of its deployment and storage type", FSX_API)
def capacity(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for fs in graph.of_type(LUSTRE):
        i = fs.inputs
        deployment, storage = i.get("deploymentType", "SCRATCH_1"), i.get("storageType", "SSD")
        size = i.get("storageCapacity")
        throughput = i.get("perUnitStorageThroughput") if storage == "HDD" else None
        steps = CAPACITY.get((deployment, storage, throughput))
        if steps is None or not judgeable_number(size):
            continue
        first, increment = steps
        if size not in first and (size <= 0 or size % increment):
            allowed = ", ".join(map(str, first)) + (", or " if first else "") + f"multiples of {increment}"
            yield Violation(fs, "storageCapacity", size, f"{size} GiB; {deployment} {storage} takes {allowed} GiB")


@rule(
    "PF-FSX-THROUGHPUT", "per-unit throughput is one of the tiers of a persistent deployment, unset on scratch", FSX_API
)
def throughput(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for fs in graph.of_type(LUSTRE):
        i = fs.inputs
        deployment, storage = i.get("deploymentType", "SCRATCH_1"), i.get("storageType", "SSD")
        value = i.get("perUnitStorageThroughput")
        if value is None or not judgeable_number(value):
            continue
        tiers = THROUGHPUT.get((deployment, storage))
        if tiers is None:
            yield Violation(fs, "perUnitStorageThroughput", value, f"throughput tier on {deployment}")
        elif value not in tiers:
            yield Violation(
                fs, "perUnitStorageThroughput", value, f"{value}; {deployment} {storage} takes {sorted(tiers)}"
            )


@rule(
    "PF-FSX-DRA",
    "data repository associations are supported on Lustre 2.12 and later, except the SCRATCH_1 deployment type",
    "Amazon FSx API Reference, CreateDataRepositoryAssociation",
)
def data_repository_associations(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for dra in graph.of_type(tokens.FSX_DRA):
        for fs in graph.dependencies_of(dra, LUSTRE):
            deployment = fs.inputs.get("deploymentType", "SCRATCH_1")
            version = fs.inputs.get("fileSystemTypeVersion")
            if deployment == "SCRATCH_1":
                yield Violation(dra, "fileSystemId", fs.name, "association on a SCRATCH_1 file system")
            if isinstance(version, str) and version in ("2.10",):
                yield Violation(dra, "fileSystemId", version, f"association on Lustre {version}")


def _bucket_name(arn_or_name: object) -> object:
    return arn_or_name.removeprefix("arn:aws:s3:::") if isinstance(arn_or_name, str) else arn_or_name


@rule(
    "PF-S3-REPLICATION",
    "replication needs versioning enabled on the source and every destination bucket; a rule with a filter "
    "states delete marker replication; replicating SSE-KMS objects names the replica key",
    "Amazon S3 User Guide, requirements for replication (https://docs.aws.amazon.com/AmazonS3/latest/userguide/"
    "replication-requirements.html); Amazon S3 API Reference, ReplicationRule and SourceSelectionCriteria",
)
def replication(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    versioned = {}
    for v in graph.of_type(tokens.BUCKET_VERSIONING, tokens.BUCKET_VERSIONING_V2):
        versioned[v.inputs.get("bucket")] = (v.inputs.get("versioningConfiguration") or {}).get("status")
    buckets = {b.inputs.get("bucket") for b in graph.of_type(tokens.BUCKET, tokens.BUCKET_V2)}
    for r in graph.of_type(tokens.BUCKET_REPLICATION):
        source = r.inputs.get("bucket")
        if versioned.get(source) != "Enabled":
            yield Violation(r, "bucket", source, "the source bucket's versioning is not enabled in this stack")
        for n, rl in enumerate(r.inputs.get("rules") or []):
            dest = _bucket_name((rl.get("destination") or {}).get("bucket"))
            if dest in buckets and versioned.get(dest) != "Enabled":
                yield Violation(
                    r, f"rules[{n}].destination.bucket", dest, "the destination bucket's versioning is not enabled"
                )
            if rl.get("filter") is not None and not rl.get("deleteMarkerReplication"):
                yield Violation(
                    r,
                    f"rules[{n}].deleteMarkerReplication",
                    None,
                    "a rule with a filter without deleteMarkerReplication",
                )
            sse = ((rl.get("sourceSelectionCriteria") or {}).get("sseKmsEncryptedObjects") or {}).get("status")
            key = ((rl.get("destination") or {}).get("encryptionConfiguration") or {}).get("replicaKmsKeyId")
            if sse == "Enabled" and not key:
                yield Violation(
                    r, f"rules[{n}].destination.encryptionConfiguration", None, "SSE-KMS objects without a replica key"
                )


__all__ = ["CAPACITY", "THROUGHPUT"]
