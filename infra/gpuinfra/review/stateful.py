"""Resources that hold data a replacement or deletion destroys, and what a reviewer loses with each.

The diff names these first: a replaced Lustre file system is a new, empty file system (FSx for Lustre User Guide:
data not exported to the linked S3 bucket exists only on the file system); a deleted bucket takes its objects and
versions; a deleted KMS key makes everything encrypted under it unreadable once its deletion window ends (AWS KMS
Developer Guide, "Deleting AWS KMS keys").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
BUCKET_LOSS = "every object in the bucket and every kept version"
STATEFUL: dict[str, str] = {
    LUSTRE: "the file system's files not yet exported to S3 (checkpoints written since the last export)",
    "aws:s3/bucket:Bucket": BUCKET_LOSS,
    "aws:s3/bucketV2:BucketV2": BUCKET_LOSS,
    "aws:kms/key:Key": "everything encrypted under the key, unreadable once its deletion window ends",
    "aws:ecr/repository:Repository": "every image in the repository",
    "aws:efs/fileSystem:FileSystem": "every file on the file system",
}
"""Stateful type -> what its replacement or deletion loses."""


@dataclass(frozen=True, slots=True)
class DataLoss:
    """A replacement or deletion of a resource that holds data."""

    stack: str
    type: str
    name: str
    action: str
    """replace or delete."""
    lost: str
    protected: bool
    """The deployed resource has Pulumi `protect`: `pulumi up` stops at this step instead of destroying it."""


def data_loss(
    stack: str, action: str, type_: str, name: str, inputs: dict[str, Any], protected: bool
) -> DataLoss | None:
    """The loss a replace or delete of this resource means, or None when it holds no data or is not destroyed."""
    lost = STATEFUL.get(type_)
    if lost is None or action not in ("replace", "delete"):
        return None
    if type_ == LUSTRE and isinstance(inputs.get("storageCapacity"), int | float):
        lost = f"{int(inputs['storageCapacity']):,} GiB: {lost}"
    return DataLoss(stack, type_, name, action, lost, protected)


__all__ = ["STATEFUL", "DataLoss", "data_loss"]
