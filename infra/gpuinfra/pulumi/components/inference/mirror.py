"""The fleet's mirror script (templates/inference/mirror-image.sh.j2): the one-time copy of the pinned server image
into the fleet's repositories (image_source ecr_mirror), rendered for its regions and exported as a stack output."""

from __future__ import annotations

from gpuinfra.pulumi.components.inference.images import mirrored_image, split_image
from gpuinfra.spec import InferenceSpec
from gpuinfra.templating import renderer

render = renderer("inference")


def digest_tag(digest: str) -> str:
    """An image tag naming the digest (sha256:<hex> -> sha256-<hex>; ECR tags allow letters, digits, _ . -)."""
    return digest.replace(":", "-")


def mirror_script(spec: InferenceSpec, account_id: str, regions: list[str]) -> str:
    assert spec.server_image_digest is not None, "mirror-without-digest refuses this before building"
    host, path = split_image(spec.server_image)
    repository = path.split("@")[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return str(
        render(
            "mirror-image.sh.j2",
            fleet=spec.name,
            source=f"{host}/{repository}",
            digest=spec.server_image_digest,
            tag=digest_tag(spec.server_image_digest),
            targets=[(r, mirrored_image(account_id, r, spec.name, spec.server_image).image) for r in regions],
        )
    )


__all__ = ["digest_tag", "mirror_script"]
