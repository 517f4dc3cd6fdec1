"""The server image from ECR in the fleet's own account and region: a pull-through cache rule per region
mirrors the upstream registry on first pull, so replicas never pull anonymously from a public registry
through a NAT address (Docker Hub: 10 unauthenticated pulls per hour per IPv4 address, Docker docs "Usage
and limits"), and pulls go over the ECR and S3 endpoints.

Upstreams and their ECR names: Amazon ECR user guide, "Sync an upstream registry with an Amazon ECR
registry" (pull through cache): Docker Hub, GitHub Container Registry need a Secrets Manager secret whose
name starts with `ecr-pullthroughcache/` (username and access token); ECR Public, Quay and the Kubernetes
registry need none. The image is addressed as <account>.dkr.ecr.<region>.amazonaws.com/<prefix>/<repository>.
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
    "pull_through_cache",
    "registry_host",
    "split_image",
    "upstream_of",
]
