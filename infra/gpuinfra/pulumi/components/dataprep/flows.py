"""The data flows a dataprep stack depends on, judged by preflight's access stage (identity, bucket and key
policies together): the workers read the raw corpus, write and read back intermediates under the stack's key,
and write the tokens. Whether the training accounts may read the tokens, and only them, is judged with the
training stacks' graphs too (tests/dataprep/test_flows.py)."""

from __future__ import annotations

from gpuinfra.graph.flows import Flow
from gpuinfra.pulumi.components.dataprep.storage import split
from gpuinfra.spec.dataprep import DataprepSpec

S3_UG = "https://docs.aws.amazon.com/AmazonS3/latest/userguide"
MULTIPART = f"{S3_UG}/mpuoverview.html#mpuAndPermissions"
SSE_KMS = f"{S3_UG}/UsingKMSEncryption.html"
GET = "https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html"
SAMPLE = "example/00000.jsonl.gz"
"""A representative object under a prefix: policies grant prefixes, requests name objects."""


def worker_role(spec: DataprepSpec) -> str:
    """The logical name of the role the workers act as (components/dataprep/slurm.py and stack.py)."""
    return f"{spec.name}-ray" if spec.engine == "datatrove-ray" else f"{spec.name}-role"


def object_arn(uri: str) -> str:
    bucket, prefix = split(uri)
    return f"arn:aws:s3:::{bucket}/{prefix}{SAMPLE}"


def dataprep_flows(stack: str, spec: DataprepSpec) -> list[Flow]:
    role = worker_role(spec)
    scratch, tokens = object_arn(spec.scratch.uri), object_arn(spec.output.uri)
    return [
        Flow("read the raw corpus", stack, role, "s3:GetObject", object_arn(spec.corpus.uri), source=GET),
        Flow("write intermediates (multipart)", stack, role, "s3:PutObject", scratch, source=MULTIPART),
        Flow("write intermediates: data key", stack, role, "kms:GenerateDataKey", scratch, key_of=True, source=SSE_KMS),
        Flow("read intermediates back", stack, role, "s3:GetObject", scratch, source=GET),
        Flow("read intermediates: decrypt", stack, role, "kms:Decrypt", scratch, key_of=True, source=SSE_KMS),
        Flow("write the token shards (multipart)", stack, role, "s3:PutObject", tokens, source=MULTIPART),
    ]


__all__ = ["dataprep_flows", "object_arn", "worker_role"]
