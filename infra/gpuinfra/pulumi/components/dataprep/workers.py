"""What the workers may do, as one IAM policy: read the raw corpus prefix, write the scratch and output prefixes
(and read back what earlier stages wrote), use the stack's key, and, on PCS, register with the cluster. Nothing
else: a write outside the declared prefixes is denied by AWS, and preflight's flows show which ones are allowed."""

from __future__ import annotations

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.dataprep.storage import split
from gpuinfra.spec.dataprep import DataprepSpec


def worker_statements(spec: DataprepSpec, key_arn: str, pcs: bool) -> list[iam.Statement]:
    corpus_bucket, corpus_prefix = split(spec.corpus.uri)
    scratch_bucket, scratch_prefix = split(spec.scratch.uri)
    out_bucket, out_prefix = split(spec.output.uri)
    statements = [
        *iam.s3_read("RawCorpus", corpus_bucket, corpus_prefix),
        *iam.s3_write("Scratch", scratch_bucket, scratch_prefix),
        *iam.s3_write("Tokens", out_bucket, out_prefix),
        iam.kms_use("StackKey", key_arn),
    ]
    if pcs:
        statements.append(
            {
                "Sid": "RegisterWithPcs",
                "Effect": "Allow",
                "Action": ["pcs:RegisterComputeNodeGroupInstance"],
                "Resource": ["*"],
            }
        )
    return statements


def worker_policy(spec: DataprepSpec, key_arn: str, pcs: bool) -> str:
    return iam.document(*worker_statements(spec, key_arn, pcs))


__all__ = ["worker_policy", "worker_statements"]
