"""Amazon EKS version support and node image releases, from data/eks.yaml here (each row cited and dated):
what the cost report bills the control plane at, what `validate` warns about, and the `releaseVersion` the
node groups pin."""

from __future__ import annotations

import datetime
from functools import cache
from pathlib import Path

from gpuinfra.catalog.load import CatalogError
from pydantic import BaseModel, ConfigDict

DATA_DIR = Path(__file__).parent / "data"


class VersionSupport(BaseModel):
    """One Kubernetes minor version on EKS: standard support until `standard_end`, then extended support (billed
    at the extended rate from the start of that day) until `extended_end`, after which EKS upgrades the control
    plane itself and creates no new cluster at the version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    eks_release: datetime.date
    standard_end: datetime.date
    extended_end: datetime.date
    source: str
    as_of: datetime.date | None

    def tier(self, day: datetime.date) -> str:
        """standard, extended or ended on `day` (UTC)."""
        if day < self.standard_end:
            return "standard"
        return "extended" if day < self.extended_end else "ended"


class NodeReleases(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: datetime.date
    releases: dict[str, str]


class EksVersions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    versions: tuple[VersionSupport, ...]
    node_releases: NodeReleases

    def support(self, version: str) -> VersionSupport | None:
        """The version's support window; None: not in the catalog (unknown, never assumed)."""
        return next((v for v in self.versions if v.version == version), None)

    def node_release(self, version: str) -> str | None:
        """The EKS-optimized AL2023 AMI release version pinned for the Kubernetes minor (None: none known)."""
        return self.node_releases.releases.get(version)


@cache
def eks_versions() -> EksVersions:
    from gpuinfra.catalog import load_catalog
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load((DATA_DIR / "eks.yaml").read_text(encoding="utf-8"))
    versions = EksVersions.model_validate(data)
    sources = load_catalog().sources
    for source, as_of in [(v.source, v.as_of) for v in versions.versions] + [
        (versions.node_releases.source, versions.node_releases.as_of)
    ]:
        if source not in sources:
            raise CatalogError(f"eks.yaml cites unknown source {source}")
        if as_of != sources[source].date:
            raise CatalogError(f"eks.yaml: {source} rows must be as of the source's date {sources[source].date}")
    return versions


__all__ = ["EksVersions", "NodeReleases", "VersionSupport", "eks_versions"]
