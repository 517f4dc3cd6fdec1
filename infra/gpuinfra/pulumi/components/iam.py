"""IAM policy documents as pure functions: least privilege, one statement per purpose, no `*` on `*`."""

from __future__ import annotations

import json
from typing import Any

Statement = dict[str, Any]


def document(*statements: Statement) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, sort_keys=True)


def assume_role(service: str) -> str:
    return document({"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"})


def deny_insecure_transport(bucket: str) -> Statement:
    """Refuse every request to the bucket that is not over TLS: Security Hub S3.5 ("S3 general purpose buckets
    should require requests to use SSL"; the S3 User Guide's example denies s3:* when aws:SecureTransport is
    false). Deny wins over any Allow in the same or another policy, so it merges with the rest unchanged."""
    return {
        "Sid": "DenyInsecureTransport",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }


def s3_read(sid: str, bucket: str, prefix: str) -> list[Statement]:
    """Read objects under one prefix and list only that prefix."""
    return [
        {
            "Sid": f"{sid}Objects",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
        },
        {
            "Sid": f"{sid}List",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{bucket}"],
            "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        },
    ]


def s3_write(sid: str, bucket: str, prefix: str, read_back: bool = True) -> list[Statement]:
    """Write (and, for checkpoints, read back) objects under one prefix."""
    actions = ["s3:PutObject", "s3:AbortMultipartUpload"] + (["s3:GetObject"] if read_back else [])
    statements: list[Statement] = [
        {
            "Sid": f"{sid}Objects",
            "Effect": "Allow",
            "Action": actions,
            "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
        },
    ]
    if read_back:
        statements.append(
            {
                "Sid": f"{sid}List",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": [f"arn:aws:s3:::{bucket}"],
                "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            }
        )
    return statements


def kms_use(sid: str, key_arn: str, decrypt_only: bool = False) -> Statement:
    actions = ["kms:Decrypt"] if decrypt_only else ["kms:Decrypt", "kms:GenerateDataKey"]
    return {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": [key_arn]}


def kms_via_s3(
    sid: str, account_id: str, region: str, decrypt_only: bool = False, bucket: str | None = None
) -> Statement:
    """Use another account's bucket key, only through S3 in that region (the key ARN is not known here), and,
    given `bucket`, only for that bucket's objects: S3 passes the bucket ARN as the encryption context with an
    S3 Bucket Key, the object ARN without one (S3 UG, "Encryption context")."""
    actions = ["kms:Decrypt"] if decrypt_only else ["kms:Decrypt", "kms:GenerateDataKey"]
    condition: dict[str, Any] = {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}}
    if bucket is not None:
        condition["StringLike"] = {
            "kms:EncryptionContext:aws:s3:arn": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]
        }
    return {
        "Sid": sid,
        "Effect": "Allow",
        "Action": actions,
        "Resource": [f"arn:aws:kms:{region}:{account_id}:key/*"],
        "Condition": condition,
    }


__all__ = ["assume_role", "deny_insecure_transport", "document", "kms_use", "kms_via_s3", "s3_read", "s3_write"]
