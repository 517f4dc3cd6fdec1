"""FSx for Lustre, EFS and S3 -> FSx, EFS and S3 API requests, following terraform-provider-aws
internal/service/fsx (lustre_file_system.go `resourceLustreFileSystemCreate`, data_repository_association.go),
internal/service/efs (file_system.go `resourceFileSystemCreate`, mount_target.go `resourceMountTargetCreate`) and
internal/service/s3 (bucket.go, bucket_versioning.go, bucket_lifecycle_configuration.go `expandLifecycleRules`,
bucket_replication_configuration.go `expandReplicationRules`, ...)."""

from __future__ import annotations

from gpuinfra.clouds.aws.preflight.translate import AUTONAME, DROP, Call, F, json_doc, listed, tag_list
from gpuinfra.graph import Resource

LUSTRE_CONFIGURATION = (
    "weeklyMaintenanceStartTime",
    "importPath",
    "exportPath",
    "importedFileChunkSize",
    "deploymentType",
    "autoImportPolicy",
    "perUnitStorageThroughput",
    "dailyAutomaticBackupStartTime",
    "automaticBackupRetentionDays",
    "copyTagsToBackups",
    "driveCacheType",
    "dataCompressionType",
    "efaEnabled",
    "logConfiguration",
    "rootSquashConfiguration",
    "metadataConfiguration",
    "throughputCapacity",
    "dataReadCacheConfiguration",
)


def lustre_file_system(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call("fsx", "CreateFileSystem").put("FileSystemType", "LUSTRE").put("ClientRequestToken", AUTONAME)
    top = {k: v for k, v in i.items() if k not in LUSTRE_CONFIGURATION}
    spec = {
        "subnetIds": F(convert=listed),
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
        "skipFinalBackup": DROP,
        "finalBackupTags": DROP,
        "backupId": DROP,
    }
    call.fill(top, spec)
    lustre = {k: v for k, v in i.items() if k in LUSTRE_CONFIGURATION}
    if lustre:
        call.fill(lustre, into="LustreConfiguration")
    return [call]


def data_repository_association(r: Resource) -> list[Call]:
    spec = {"deleteDataInFilesystem": DROP, "tags": F(convert=tag_list()), "tagsAll": DROP}
    return [Call("fsx", "CreateDataRepositoryAssociation").put("ClientRequestToken", AUTONAME).fill(r.inputs, spec)]


def efs_file_system(r: Resource) -> list[Call]:
    """CreateFileSystem: the provider sends a generated CreationToken; lifecycle policies and protection are
    later requests (PutLifecycleConfiguration, UpdateFileSystemProtection) the stacks do not use."""
    spec = {
        "creationToken": DROP,
        "tags": F(convert=tag_list()),
        "tagsAll": DROP,
        "lifecyclePolicies": DROP,
        "protection": DROP,
        "region": DROP,
        "name": DROP,
    }
    return [Call("efs", "CreateFileSystem").put("CreationToken", AUTONAME).fill(r.inputs, spec)]


def efs_backup_policy(r: Resource) -> list[Call]:
    """PutBackupPolicy: the file system and the policy's one member, Status (botocore EFS model)."""
    return [Call("efs", "PutBackupPolicy").fill(r.inputs, {"region": DROP})]


def efs_mount_target(r: Resource) -> list[Call]:
    spec = {"securityGroups": F(convert=listed), "region": DROP, "name": DROP}
    return [Call("efs", "CreateMountTarget").fill(r.inputs, spec)]


S3 = "s3"


def bucket(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(S3, "CreateBucket").put("Bucket", i.get("bucket", AUTONAME), "bucket")
    spec = {
        "bucket": DROP,
        "bucketPrefix": DROP,
        "forceDestroy": DROP,
        "objectLockEnabled": "ObjectLockEnabledForBucket",
        "tags": DROP,  # PutBucketTagging
        "tagsAll": DROP,
        "region": DROP,
    }
    return [call.fill(i, spec)]


def bucket_versioning(r: Resource) -> list[Call]:
    spec = {"versioningConfiguration": F(fields={"mfaDelete": "MFADelete"}), "mfa": "MFA"}
    return [Call(S3, "PutBucketVersioning").fill(r.inputs, spec)]


def bucket_lifecycle(r: Resource) -> list[Call]:
    rule = F(
        fields={
            "id": "ID",
            "filter": F(fields={"and": F("And")}),
            "transitions": F(fields={}),
        }
    )
    call = Call(S3, "PutBucketLifecycleConfiguration").put("Bucket", r.inputs.get("bucket"), "bucket")
    call.fill({"rules": r.inputs.get("rules", [])}, {"rules": rule}, into="LifecycleConfiguration")
    spec = {"bucket": DROP, "rules": DROP, "timeouts": DROP}
    return [call.fill(r.inputs, spec)]


def public_access_block(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(S3, "PutPublicAccessBlock").put("Bucket", i.get("bucket"), "bucket")
    flags = {k: v for k, v in i.items() if k not in ("bucket", "skipDestroy", "region")}
    return [call.fill(flags, into="PublicAccessBlockConfiguration")]


def encryption(r: Resource) -> list[Call]:
    call = Call(S3, "PutBucketEncryption").put("Bucket", r.inputs.get("bucket"), "bucket")
    call.fill({"rules": r.inputs.get("rules", [])}, into="ServerSideEncryptionConfiguration")
    return [call.fill(r.inputs, {"bucket": DROP, "rules": DROP})]


def ownership_controls(r: Resource) -> list[Call]:
    call = Call(S3, "PutBucketOwnershipControls").put("Bucket", r.inputs.get("bucket"), "bucket")
    if isinstance(r.inputs.get("rule"), dict):
        rule = call.mapped(r.inputs["rule"], ".OwnershipControls.Rules[0]", at="rule")
        call.put("OwnershipControls", {"Rules": [rule]})
    return [call.fill(r.inputs, {"bucket": DROP, "rule": DROP})]


def bucket_policy(r: Resource) -> list[Call]:
    return [Call(S3, "PutBucketPolicy").fill(r.inputs, {"policy": F(convert=json_doc)})]


def object_lock(r: Resource) -> list[Call]:
    """bucket_object_lock_configuration.go: ObjectLockConfiguration{ObjectLockEnabled, Rule{DefaultRetention}}."""
    i = r.inputs
    call = Call(S3, "PutObjectLockConfiguration").put("Bucket", i.get("bucket"), "bucket")
    lock: dict[str, object] = {k: i[k] for k in ("objectLockEnabled", "rule") if k in i}
    call.fill(lock, into="ObjectLockConfiguration")
    return [call.fill(i, {"bucket": DROP, "objectLockEnabled": DROP, "rule": DROP, "region": DROP})]


def replication(r: Resource) -> list[Call]:
    i = r.inputs
    call = Call(S3, "PutBucketReplication").put("Bucket", i.get("bucket"), "bucket")
    rule = F(
        fields={
            "id": "ID",
            "filter": F(fields={"and": F("And")}),
            "destination": F(
                fields={
                    "encryptionConfiguration": F(fields={"replicaKmsKeyId": "ReplicaKmsKeyID"}),
                    "accessControlTranslation": F(fields={}),
                }
            ),
            "sourceSelectionCriteria": F(fields={"sseKmsEncryptedObjects": F("SseKmsEncryptedObjects")}),
        }
    )
    call.fill({"role": i.get("role"), "rules": i.get("rules", [])}, {"rules": rule}, into="ReplicationConfiguration")
    return [call.fill(i, {"bucket": DROP, "role": DROP, "rules": DROP, "token": "Token"})]


__all__ = [
    "bucket",
    "bucket_lifecycle",
    "bucket_policy",
    "bucket_versioning",
    "data_repository_association",
    "efs_backup_policy",
    "encryption",
    "lustre_file_system",
    "object_lock",
    "ownership_controls",
    "public_access_block",
    "replication",
]
