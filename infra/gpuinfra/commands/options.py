"""What every stack of one preview run is previewed with: one frozen value, handed to the pipeline, the
workers, the cache's keys and both sides of a review alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuinfra.cost import Usage, load_usage_file
from gpuinfra.errors import InputError, Problem
from gpuinfra.policy.config import PolicyConfig
from gpuinfra.policy.facts import FactsError
from gpuinfra.policy.rules.trust import BASE_PROPERTY
from gpuinfra.policy.rules.trust import POLICY as TRUST_POLICY
from gpuinfra.workspace.members import file_stamp
from gpuinfra.workspace.trusted import revision_organization


@dataclass(frozen=True)
class PreviewOptions:
    org: Path | None = None
    """The organization file (default: the trusted one beside the stack)."""
    suppress: tuple[str, ...] = ()
    """Rule ids of warnings to silence."""
    usage_file: Path | None = None
    """Usage for usage-priced lines (the plan's assumed usage fills the rest)."""
    policy_config: Path | None = None
    """The policy pack's config, in the format `pulumi preview --policy-pack-config` reads."""

    @classmethod
    def of(
        cls,
        org: Path | None = None,
        suppress: Iterable[str] = (),
        usage_file: Path | None = None,
        policy_config: Path | None = None,
    ) -> PreviewOptions:
        return cls(org, tuple(suppress), usage_file, policy_config)

    def resolved(self) -> PreviewOptions:
        """The files named resolved, the organization left to each stack (how a review's base is previewed
        inside its checkout, as the base revision's own `preview` would be given them)."""
        return PreviewOptions(None, self.suppress, _resolved(self.usage_file), _resolved(self.policy_config))


NO_OPTIONS = PreviewOptions()
"""The defaults: the trusted organization file, nothing suppressed, no usage file, the pack's own config."""


def _resolved(path: Path | None) -> Path | None:
    return path.resolve() if path is not None else None


def policies(options: PreviewOptions) -> Mapping[str, PolicyConfig]:
    """The pack's config for the run, read once while the file is unchanged (a bad file refused whether or not
    a stack is previewed)."""
    path = options.policy_config
    return _policies(path, file_stamp(path) if path is not None else None)  # unreadable: the reader names why


@lru_cache(maxsize=8)
def _policies(path: Path | None, stamp: object) -> Mapping[str, PolicyConfig]:
    from gpuinfra.policy.pack import pack_config

    return pack_config(path)


def with_trusted_revision(options: PreviewOptions) -> PreviewOptions:
    """The run judged by the organization file of the revision the policy config trusts
    (`separation-trusted-organization.base_ref`) when no --org names one, as the pack under the Pulumi CLI reads it
    (gpuinfra.workspace.trusted): in-process and under the CLI, one config gives one verdict. A revision that cannot
    be read is refused, naming the config (exit 2)."""
    if options.org is not None or options.policy_config is None:
        return options
    trusted = policies(options).get(TRUST_POLICY)
    ref = str(trusted.properties.get(BASE_PROPERTY) or "") if trusted is not None else ""
    if not ref:
        return options
    try:
        org = revision_organization(ref)
    except FactsError as exc:
        raise InputError([Problem(str(exc), file=options.policy_config)]) from None
    return PreviewOptions(org, options.suppress, options.usage_file, options.policy_config)


def usage(options: PreviewOptions) -> Usage:
    return load_usage_file(options.usage_file) if options.usage_file else Usage()


__all__ = ["NO_OPTIONS", "PreviewOptions", "policies", "usage", "with_trusted_revision"]
