"""The types of the spec values that reach a generated file as words: S3 keys and prefixes (which nodes also use as
folder names), Slurm values, Kubernetes label values, Prometheus metric names and pinned EC2 images. Each is checked
once, here, so a template, a policy ARN or a PromQL query can take it as it is; the templates quote it for their
file as well (templating.py), which keeps a value inert, not meaningful."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

KEY_CHARACTERS = "letters, digits and ._=+@,- between the slashes"


def relative_key(key: str) -> str:
    """An S3 key or key prefix that is also a safe relative path: no leading `/`, no empty, `.` or `..` segment
    (PurePosixPath reads it as the same path). Nodes create folders named after model and adapter prefixes
    (/var/lib/gpuinfra/weights/<prefix>), so `llama/../../etc/` would be a folder outside the cache; and an S3
    console or CLI never shows such keys as the folders they look like."""
    body = key[:-1] if key.endswith("/") else key
    if not key:
        return key
    if key.startswith("/"):
        raise ValueError(f"{key!r} starts with '/': write the key without it (e.g. {key.lstrip('/') or 'models/'})")
    path = PurePosixPath(body)
    bad = next((part for part in body.split("/") if part in ("", ".", "..")), None)
    if bad is not None:
        shown = "an empty segment ('//')" if bad == "" else f"a {bad!r} segment"
        raise ValueError(f"{key!r} has {shown}: name the folder itself, e.g. llama-3.1-8b/v3/")
    if str(path) != body:  # pragma: no cover - the checks above are what PurePosixPath normalizes
        raise ValueError(f"{key!r} is not a normal path: write it as {path}/")
    return key


def _s3_uri_key(uri: str) -> str:
    _, _, rest = uri.partition("s3://")
    _, slash, key = rest.partition("/")
    if slash:
        relative_key(key)
    return uri


KeyPrefix = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9._/-]*[a-z0-9._-]/$"),
    AfterValidator(relative_key),
    Field(description="An S3 key prefix: lower-case folder names ending with '/', e.g. llama-3.1-8b/v3/; no '..'."),
]
"""Model, adapter and fine-tune prefixes under the registry's model prefix."""

S3Uri = Annotated[
    str,
    StringConstraints(pattern=r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[A-Za-z0-9._=+@,/-]*)?$"),
    AfterValidator(_s3_uri_key),
    Field(description=f"s3://bucket/prefix/: the key of {KEY_CHARACTERS}, with no empty, '.' or '..' segment."),
]
"""Dataset, checkpoint export and code locations. The key's characters are S3's "safe characters" (Amazon S3 User
Guide, "Naming Amazon S3 objects") less `*` (an IAM wildcard, since the key reaches policy ARNs), `'`, `!`, `(` and
`)`, plus `=+@,`: none of them means anything to a shell, an ARN or a URL."""

SlurmValue = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_-]*$", max_length=64),
    Field(description="A Slurm name (partition): a lower-case letter, then lower-case letters, digits, '_' or '-'."),
]
"""What an `#SBATCH` directive or a slurm.conf line takes as one token (templating.slurm_value accepts these)."""

K8sLabelValue = Annotated[
    str,
    StringConstraints(max_length=63, pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"),
    Field(
        description="A Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting and ending "
        "with a letter or digit."
    ),
]
"""Kubernetes API, "Labels and Selectors", syntax and character set."""

PromMetricName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$", max_length=200),
    Field(description="A Prometheus metric name, e.g. vllm:num_requests_waiting."),
]
"""Prometheus data model, "Metric names and labels": [a-zA-Z_:][a-zA-Z0-9_:]*. It is written into a PromQL query
(the fleet's load), so anything else could change the query."""

PinnedImage = Annotated[
    str,
    StringConstraints(pattern=r"^(ami-[0-9a-f]{8,17}|resolve:ssm:/[A-Za-z0-9_.\-/]{1,1010}:[0-9]{1,9})$"),
    Field(
        description="A pinned EC2 image: an AMI id (ami-0123456789abcdef0) or resolve:ssm:<parameter>:<version>, "
        "the parameter a /-path of letters, digits and ._-, the version a number."
    ),
]
"""An image a launch template boots, written into it as is (EC2 ImageId: an AMI id or `resolve:ssm:`; SSM parameter
names: a-zA-Z0-9_.- and / for the hierarchy, 1,011 characters at most with the leading /). The version is read
as a number by the program (slurm_pcs.ssm_image)."""

__all__ = ["K8sLabelValue", "KeyPrefix", "PinnedImage", "PromMetricName", "S3Uri", "SlurmValue", "relative_key"]
