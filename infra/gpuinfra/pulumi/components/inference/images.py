"""The server image from ECR in the fleet's own account and region, by digest. Two ways to fill it:

- ecr_mirror (the default): a repository per region that the stack owns (immutable tags, scanned on push), filled
  once per image digest by the fleet's mirror script (`mirror-image.sh`, stack output `mirror_image_script`), which
  copies the pinned digest from its registry into every region's repository and checks the digest it wrote. No
  registry credential is stored anywhere: the copy runs with the operator's own registry login.
- ecr_pull_through: a pull-through cache rule per region mirrors the upstream registry on first pull.

Either way replicas never pull anonymously from a public registry through a NAT address (Docker Hub: 10
unauthenticated pulls per hour per IPv4 address, Docker docs "Usage and limits"), and pulls go over the ECR and
S3 endpoints.

Upstreams and their ECR names: Amazon ECR user guide, "Sync an upstream registry with an Amazon ECR
registry" (pull through cache): Docker Hub, GitHub Container Registry need a Secrets Manager secret whose
name starts with `ecr-pullthroughcache/` (username and access token), which someone has to set by hand in every
region; ECR Public, Quay and the Kubernetes registry need none. The image is addressed as
<account>.dkr.ecr.<region>.amazonaws.com/<prefix>/<repository>.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

DOCKER_HUB = "docker.io"


@dataclass(frozen=True)
class Upstream:
    url: str
    """upstreamRegistryUrl of the rule."""
    prefix: str
    """ecrRepositoryPrefix: the first path segment of the cached repositories."""
    credential: bool
    """The upstream needs a credential secret (ecr-pullthroughcache/...)."""


UPSTREAMS = {
    DOCKER_HUB: Upstream("registry-1.docker.io", "docker-hub", True),
    "ghcr.io": Upstream("ghcr.io", "github", True),
    "public.ecr.aws": Upstream("public.ecr.aws", "ecr-public", False),
    "quay.io": Upstream("quay.io", "quay", False),
    "registry.k8s.io": Upstream("registry.k8s.io", "k8s", False),
}


def split_image(image: str) -> tuple[str, str]:
    """(registry host, repository[:tag]); a first segment without '.' or ':' (and not localhost) is a Docker
    Hub path, and Docker Hub's one-segment names live under library/."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return DOCKER_HUB, image if rest else f"library/{image}"


def upstream_of(image: str) -> Upstream | None:
    """The pull-through upstream for the image's registry (None: not one ECR can cache)."""
    return UPSTREAMS.get(split_image(image)[0])


def registry_host(account_id: str, region: str) -> str:
    return f"{account_id}.dkr.ecr.{region}.amazonaws.com"


@dataclass(frozen=True)
class CachedImage:
    registry: str
    """The ECR registry host to log in to."""
    image: str
    """The image as replicas pull it: <registry>/<prefix>/<repository>[:tag]."""
    prefix: str


def cached_image(account_id: str, region: str, image: str) -> CachedImage | None:
    upstream = upstream_of(image)
    if upstream is None:
        return None
    host = registry_host(account_id, region)
    return CachedImage(host, f"{host}/{upstream.prefix}/{split_image(image)[1]}", upstream.prefix)


def repository_name(image: str) -> str:
    """The image's repository path without registry, tag or digest (vllm/vllm-openai)."""
    path = split_image(image)[1].split("@")[0]
    last = path.rsplit("/", 1)[-1]
    return path.rsplit(":", 1)[0] if ":" in last else path


def mirrored_image(account_id: str, region: str, fleet: str, image: str) -> CachedImage:
    """The fleet's own repository in the region: <registry>/<fleet>/<repository name>, e.g. chat-serve/vllm-openai."""
    host = registry_host(account_id, region)
    last = repository_name(image).rsplit("/", 1)[-1]
    return CachedImage(host, f"{host}/{fleet}/{last}", fleet)


def mirror_repository(
    name: str, fleet: str, image: str, tags: dict[str, str], opts: pulumi.ResourceOptions
) -> aws.ecr.Repository:
    """The region's repository the mirror script fills: tags immutable (a digest is what replicas pull anyway),
    scanned on push, encrypted (ECR default AES256)."""
    last = repository_name(image).rsplit("/", 1)[-1]
    return aws.ecr.Repository(
        f"{name}-image-repository",
        name=f"{fleet}/{last}",
        image_tag_mutability="IMMUTABLE",
        image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(scan_on_push=True),
        encryption_configurations=[aws.ecr.RepositoryEncryptionConfigurationArgs(encryption_type="AES256")],
        force_delete=False,
        tags=tags,
        opts=opts,
    )


def fleet_image(account_id: str, region: str, fleet: str, image: str, source: str) -> CachedImage | None:
    """Where the region's replicas pull the server image from (None: its own registry, image_source direct or an
    upstream ECR cannot cache)."""
    if source == "ecr_mirror":
        return mirrored_image(account_id, region, fleet, image)
    if source == "ecr_pull_through":
        return cached_image(account_id, region, image)
    return None


def pull_through_cache(
    name: str, fleet: str, image: str, tags: dict[str, str], opts: pulumi.ResourceOptions
) -> aws.ecr.PullThroughCacheRule | None:
    """The region's rule (and, for upstreams that need one, the credential secret the operator fills once
    per region: `aws secretsmanager put-secret-value --secret-id ecr-pullthroughcache/<fleet>-<prefix>
    --secret-string '{"username": ..., "accessToken": ...}'`)."""
    upstream = upstream_of(image)
    if upstream is None:
        return None
    credential = None
    if upstream.credential:
        credential = aws.secretsmanager.Secret(
            f"{name}-registry-credential",
            name=f"ecr-pullthroughcache/{fleet}-{upstream.prefix}",
            description=f"{upstream.url} credentials for ECR's pull-through cache ({fleet})",
            recovery_window_in_days=7,
            tags=tags,
            opts=opts,
        )
    return aws.ecr.PullThroughCacheRule(
        f"{name}-image-cache",
        ecr_repository_prefix=upstream.prefix,
        upstream_registry_url=upstream.url,
        credential_arn=credential.arn if credential else None,
        opts=opts,
    )


__all__ = [
    "DOCKER_HUB",
    "UPSTREAMS",
    "CachedImage",
    "Upstream",
    "cached_image",
    "fleet_image",
    "mirror_repository",
    "mirrored_image",
    "pull_through_cache",
    "registry_host",
    "repository_name",
    "split_image",
    "upstream_of",
]
