"""Images: a machine image pinned by id or parameter version (training nodes and EC2 replicas alike); server images
pulled by digest from a registry the fleet can reach without a hand-stored credential."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule

AMI = re.compile(r"^ami-[0-9a-f]{8,17}\Z")
SSM_VERSIONED = re.compile(r"^resolve:ssm:(/[^:]+):(\d+)\Z")


def image_problem(image_id: str) -> str | None:
    """Why an image is not pinned (None when it is): an AMI id, or an SSM parameter at an explicit version."""
    if AMI.match(image_id) or SSM_VERSIONED.match(image_id):
        return ("latest" in image_id.lower() and f"{image_id} names a `latest` parameter") or None
    if image_id.startswith("resolve:ssm:"):
        return f"{image_id} resolves the parameter's current value at every launch"
    return f"{image_id} is neither an AMI id nor resolve:ssm:<parameter>:<version>"


CREDENTIAL_UPSTREAMS = ("docker.io", "ghcr.io")
"""Upstreams an ECR pull-through cache reaches only with a credential in Secrets Manager (ECR user guide, "Sync an
upstream registry with an Amazon ECR registry")."""


def registry_of(image: str) -> str:
    """The registry host of an image reference: a first path segment with '.' or ':' (or localhost), else Docker
    Hub (the Docker reference grammar, as components/inference/images.py reads it)."""
    first, _, rest = image.partition("/")
    return first if rest and ("." in first or ":" in first or first == "localhost") else "docker.io"


@rule(Level.ERROR)
def mirror_without_digest(spec: InferenceSpec) -> Iterator[Failure]:
    """image_source ecr_mirror copies one digest into the fleet's repositories (immutable, no tag to follow), so the
    spec must name it."""
    if spec.image_source == "ecr_mirror" and spec.server_image_digest is None:
        yield Failure(
            f"image_source ecr_mirror mirrors one digest of {spec.server_image}, and the spec names none",
            ("server_image_digest",),
            "write `server_image_digest: sha256:<digest>` (`docker buildx imagetools inspect "
            f"{spec.server_image}` prints the index digest), or `image_source: direct`",
        )


@rule(Level.WARNING)
def image_needs_registry_credential(spec: InferenceSpec) -> Iterator[Failure]:
    """A pull-through cache of Docker Hub or GitHub needs a credential someone sets by hand in every region before
    any replica can start: the day-1 step ecr_mirror avoids."""
    host = registry_of(spec.server_image)
    if spec.platform == "ec2" and spec.image_source == "ecr_pull_through" and host in CREDENTIAL_UPSTREAMS:
        yield Failure(
            f"the pull-through cache of {host} needs a credential set by hand in each of the "
            f"{len(spec.regions)} regions before the first replica starts",
            ("image_source",),
            "write `image_source: ecr_mirror` (the stack's repositories, filled by its mirror script) instead",
        )


__all__ = ["image_needs_registry_credential", "image_problem", "mirror_without_digest", "registry_of"]
