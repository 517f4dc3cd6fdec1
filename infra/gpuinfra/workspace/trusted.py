"""The organization file the pack trusts under the Pulumi CLI when no file is pinned: the one a git revision holds
(the base branch), never the working tree's copy a pull request may have edited.

`pulumi preview --policy-pack policies` in a pull request's CI job runs in the pull request's checkout, where
stacks/org.yaml is the change's own: it could relabel an account or raise a grant and pass. So the pack reads the
file of `separation-trusted-organization.base_ref`, or in a GitHub Actions pull-request run of the base branch
(`origin/$GITHUB_BASE_REF`: GitHub sets GITHUB_BASE_REF only for pull_request events), from git, the way
`gpuinfra diff --base-ref` does (gpuinfra.review.organization). A revision that cannot be read fails closed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from gpuinfra.errors import InputError
from gpuinfra.load import ORG_FILE_NAME, project_dir, stacks_dir
from gpuinfra.policy.facts import FactsError
from gpuinfra.review.baseref import base_commit
from gpuinfra.review.organization import base_blob

PULL_REQUEST_BASE = "GITHUB_BASE_REF"


def trusted_revision(base_ref: str) -> str:
    """The git revision whose organization file the pack trusts: the configured one, else the pull request's base
    branch in a GitHub Actions pull-request run; "" for the working tree's file."""
    if base_ref:
        return base_ref
    branch = os.environ.get(PULL_REQUEST_BASE, "")
    return f"origin/{branch}" if branch else ""


@lru_cache(maxsize=4)
def revision_organization(ref: str, project: Path | None = None) -> Path:
    """The organization file of `ref` (the project's stacks/org.yaml there), written to a private temporary file
    named by its content, for the pack to read its facts from; FactsError when it cannot be read."""
    root = project or project_dir() or Path.cwd()
    hint = (
        "fetch the base branch (actions/checkout with fetch-depth: 0), set separation-trusted-organization's "
        "base_ref to a revision this checkout has, or pin organization_file"
    )
    try:
        top, sha = base_commit(ref, root)
        relative = (stacks_dir(root) / ORG_FILE_NAME).resolve().relative_to(top.resolve()).as_posix()
        blob = base_blob(top, sha, relative)
    except (InputError, OSError, ValueError) as exc:
        raise FactsError(f"cannot read the trusted organization file at {ref}: {_first(exc)}; {hint}") from None
    if blob is None:
        raise FactsError(f"cannot read the trusted organization file at {ref}: {relative} is not in it; {hint}")
    folder = Path(tempfile.mkdtemp(prefix="gpuinfra-trusted-org-"))
    path = folder / f"{hashlib.sha256(blob).hexdigest()[:16]}-{ORG_FILE_NAME}"
    path.write_bytes(blob)
    return path


def _first(exc: Exception) -> str:
    return exc.problems[0].message if isinstance(exc, InputError) else str(exc)


__all__ = ["PULL_REQUEST_BASE", "revision_organization", "trusted_revision"]
