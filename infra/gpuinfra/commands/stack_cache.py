"""Each stack's preview kept by content (`--cache-dir`), so a review costs what changed: one stack edited in a
repository of two hundred previews one stack, on each side of `diff --base-ref`.

A stack's preview is a pure function of what it reads, and its key is a SHA-256 over exactly that:
- the stack file (its name, its path as the report shows it, its bytes), the organization file (bytes, and its
  path relative to the project) and the project file (Pulumi.yaml: the project's name is in every URN);
- the code: `code_fingerprint()` (every file of the installed package, so its templates and the catalog's data,
  and every installed distribution's version): a change to the code invalidates every stack;
- the run's options: `--suppress`, and the *content* of the usage file and the policy config;
- the clock the catalog's staleness warning reads (SOURCE_DATE_EPOCH or today's date, the age limit);
- the other stacks the preview reads: those of the same account (quotas and budgets) and the registry stacks
  (the access flows), as the workspace folds them (gpuinfra.workspace). A
  stack whose account or kind cannot be told from a quick read is counted in: an entry may be invalidated too
  often, never reused wrongly.

Keys hold no commit and no absolute path, so the base and the head of a review share the entries of every stack
whose inputs did not change. An entry is JSON (nothing is executed to read it), sealed with an HMAC under the
reviewer's key (gpuinfra.store.sealed): a truncated, edited, foreign or forged entry is ignored and overwritten, so
a cache hit can make a review faster, never greener. Writes are atomic (a temporary file renamed into place).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from gpuinfra.cost import Usage, assumed_usage, price_graph
from gpuinfra.errors import GpuinfraError
from gpuinfra.graph import Graph
from gpuinfra.plan.figures import plan_figures
from gpuinfra.report.model import StackReport
from gpuinfra.review.diff import Snapshot
from gpuinfra.store.sealed import read_sealed, write_sealed
from gpuinfra.workspace.members import read_member, stack_files, stack_name

FORMAT = "gpuinfra-stack-preview-2"
"""Bumped when the key's parts or an entry's layout change."""
FOLDER = "stacks"
"""Entries live in `<cache-dir>/stacks/`, beside the whole-base entries of gpuinfra.review.cache."""


def _digest(*parts: bytes | str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update((part.encode() if isinstance(part, str) else part) + b"\0")
    return digest.hexdigest()


def _file(path: Path | None) -> str:
    if path is None:
        return "none"
    try:
        return hashlib.sha256(read_member(path).data).hexdigest()
    except GpuinfraError:
        return "unreadable"


def _clock() -> str:
    """What the staleness warning reads: SOURCE_DATE_EPOCH (else today, UTC) and the age limit."""
    from gpuinfra.catalog.staleness import MAX_AGE_ENV

    epoch = os.environ.get("SOURCE_DATE_EPOCH") or datetime.datetime.now(datetime.UTC).date().isoformat()
    return f"{epoch}|{os.environ.get(MAX_AGE_ENV, '')}"


def _yaml(data: bytes, path: Path) -> Any:
    """The organization file's data as `read_yaml` reads it (its parse kept on disk by content); None when it cannot
    be read so (every sibling then counts). Not ruamel's C loader: its composer recurses in C, and a deeply nested
    file crashed the process (a segfault) where the reader refuses it."""
    from gpuinfra.errors import InputError
    from gpuinfra.spec.yamlfile import plain_data

    try:
        return plain_data(data.decode("utf-8"), path)
    except (InputError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class Peer:
    """What a quick read tells of one stack file: its content and, when it can be told, account and kind."""

    name: str
    digest: str
    account: str | None
    """The account *name* the spec gives; None when it cannot be read."""
    registry: bool | None
    """Whether it is a registry stack; None when it cannot be told."""


_LOOKS: dict[str, Peer] = {}
"""Quick reads by content (the digest covers the file's name and bytes): both sides of a review, and every run
in one process, look at each unchanged file once."""


def peer(path: Path) -> Peer:
    """A quick read of one stack file (no validation): its spec's account name and whether it is a registry."""
    name = stack_name(path)
    try:
        data = read_member(path).data
    except GpuinfraError:  # not a regular file, too large: the preview refuses it by name
        return Peer(name, "unreadable", None, None)
    digest = _digest(path.name, data)
    found = _LOOKS.get(digest)
    if found is None:
        found = _LOOKS[digest] = _look(name, digest, data, path)
    return found


def _look(name: str, digest: str, data: bytes, path: Path) -> Peer:
    """The spec's account and kind, read as `read_yaml` reads the file (its parse kept on disk by content);
    a file that cannot be read so is of unknown account and kind (then counted in)."""
    from gpuinfra.errors import InputError
    from gpuinfra.load import SPEC_KEYS
    from gpuinfra.spec.yamlfile import plain_data

    try:
        document = plain_data(data.decode("utf-8"), path)
    except (InputError, UnicodeDecodeError):
        document = None
    config = document.get("config") if isinstance(document, dict) else None
    kinds = [k for k in config if k in SPEC_KEYS] if isinstance(config, dict) else []
    if len(kinds) != 1:
        return Peer(name, digest, None, None)
    spec = config[kinds[0]]  # type: ignore[index]
    if isinstance(spec, str):  # the Pulumi CLI's encoding: the spec as a JSON string
        try:
            spec = json.loads(spec)
        except ValueError:
            return Peer(name, digest, None, None)
    account = spec.get("account") if isinstance(spec, dict) else None
    return Peer(name, digest, account if isinstance(account, str) else None, kinds[0].endswith(":registry"))


def _reads(peer: Peer, account: str | None, accounts: dict[str, str]) -> bool:
    """Whether a stack of account id `account` (None: unknown) may read `peer`: the ledgers read the same
    account's stacks, the access flows the registry's; whatever cannot be told is counted in."""
    if account is None or peer.account is None or peer.registry is not False:
        return True
    return accounts.get(peer.account) in (None, account)


def _shown(org: Path, project: Path | None) -> str:
    """The organization file's path relative to the project (the same on both sides of a review), else whole."""
    whole = org.resolve()
    if project is not None and whole.is_relative_to(project.resolve()):
        return whole.relative_to(project.resolve()).as_posix()
    return str(whole)


class Keys:
    """The content address of each stack's preview in one run (see the module's docstring). Files are read once
    per run: the siblings of two hundred stacks are read two hundred times, not forty thousand."""

    def __init__(
        self,
        org: Path | None,
        suppress: Iterable[str],
        usage_file: Path | None,
        policy_config: Path | None,
    ) -> None:
        from gpuinfra.store.fingerprint import code_fingerprint

        self.org = org
        self.run = _digest(
            FORMAT, code_fingerprint(), json.dumps(list(suppress)), _file(usage_file), _file(policy_config), _clock()
        )
        self._peers: dict[Path, Peer] = {}
        self._named: dict[Path, Peer] = {}
        self._folders: dict[Path, list[Path]] = {}
        self._accounts: dict[Path, dict[str, str]] = {}

    def of(self, arg: str) -> str | None:
        """The key of stack `arg` (a name or a path, as `preview` takes it); None when its files cannot be found
        (then it is previewed, and its problem reported, as without a cache)."""
        from gpuinfra.load import PROJECT_FILE, project_dir, stack_path, trusted_org_path

        try:
            path = stack_path(arg)
            own = read_member(path).data
            project = project_dir(path.parent)
            org = self.org or trusted_org_path(path, project)
            org_text = read_member(org).data
        except (GpuinfraError, OSError):
            return None
        accounts = self._account_ids(org, org_text)
        mine = self._peer(path)
        account = accounts.get(mine.account) if mine.account is not None else None
        read = [p for p in (self._peer(f) for f in self._siblings(path)) if _reads(p, account, accounts)]
        parts = [self.run, str(arg), str(path), _digest(path.name, own), _shown(org, project), _digest(org_text)]
        parts.append(_file(project / PROJECT_FILE) if project is not None else "no project")
        parts += [f"{p.name}={p.digest}" for p in sorted(read, key=lambda p: p.name)]
        return _digest(*parts)

    def _peer(self, path: Path) -> Peer:
        """Each file read once per run, however it is named (a run's working directory does not change)."""
        found = self._named.get(path)
        if found is None:
            whole = path.resolve()
            found = self._peers.get(whole)
            if found is None:
                found = self._peers[whole] = peer(path)
            self._named[path] = found
        return found

    def _siblings(self, path: Path) -> list[Path]:
        """The other stack files beside `path` (the workspace's members), listed once per folder."""
        listed = self._folders.get(path.parent)
        if listed is None:
            try:
                listed = sorted({*stack_files(path.parent), path})
            except GpuinfraError:
                listed = [path]
            self._folders[path.parent] = listed
        return [p for p in listed if p.name != path.name]

    def _account_ids(self, org: Path, text: bytes) -> dict[str, str]:
        """Account name -> id from the organization file (empty when it cannot be read: every sibling counts)."""
        found = self._accounts.get(org.resolve())
        if found is None:
            data = _yaml(text, org)
            accounts = data.get("accounts") if isinstance(data, dict) else None
            found = {
                str(name): str(body["id"])
                for name, body in (accounts.items() if isinstance(accounts, dict) else ())
                if isinstance(body, dict) and isinstance(body.get("id"), str | int)
            }
            self._accounts[org.resolve()] = found
        return found


class _ByUsage:
    """Snapshots by the usage they were priced with (a Usage holds mappings: compared, not hashed)."""

    def __init__(self) -> None:
        self._made: list[tuple[Usage, Snapshot]] = []

    def get(self, usage: Usage) -> Snapshot | None:
        return next((made for used, made in self._made if used == usage), None)

    def __setitem__(self, usage: Usage, made: Snapshot) -> None:
        self._made.append((usage, made))


@dataclass(frozen=True)
class Entry:
    """One stack's preview: its part of the report and what a review's side needs besides (the graph's project
    and stand-ins, which the report does not carry)."""

    report: StackReport
    project: str
    after_apply: dict[str, str]
    _snapshots: _ByUsage = field(default_factory=lambda: _ByUsage(), compare=False, repr=False)

    def snapshot(self, usage: Usage) -> Snapshot:
        """The review's Snapshot of this stack, as `preview_checked` makes it: the graph read back, priced again
        (pricing is pure), the findings and the plan's figures. Made once per usage: an entry is read once per
        process (`read`), and both sides of a review hold every unchanged stack."""
        made = self._snapshots.get(usage)
        if made is None:
            made = self._snapshots[usage] = self._snapshot(usage)
        return made

    def _snapshot(self, usage: Usage) -> Snapshot:
        from gpuinfra.catalog import load_catalog
        from gpuinfra.commands.snapshots import stored_findings
        from gpuinfra.review.items import review_items

        stack = self.report
        graph = breakdown = None
        if stack.resources is not None:
            graph = Graph.of(stack.stack, self.project, stack.resources, self.after_apply)
            assumed = usage.with_assumed(assumed_usage(stack.plan, graph))
            breakdown = price_graph(graph, load_catalog(), assumed)
        figures = plan_figures(stack.plan)
        return Snapshot(
            stack.stack, graph, breakdown, review_items(stack.stack, stored_findings(stack)), figures=figures
        )


def entry_of(report: StackReport, snapshot: Snapshot) -> Entry:
    graph = snapshot.graph
    return Entry(report, graph.project if graph else "", dict(graph.after_apply) if graph else {})


def _where(cache_dir: Path, key: str) -> Path:
    return cache_dir / FOLDER / f"{key}.json"


class _Stored(BaseModel):
    """An entry's payload as `write` lays it out, read in one pass by pydantic's JSON parser (reading the JSON
    into Python values first, then validating them, took twice as long)."""

    model_config = ConfigDict(extra="forbid")

    key: str
    report: StackReport
    project: str
    after_apply: dict[str, str]


MAX_ENTRY_BYTES = 64 * 1024 * 1024
"""The largest entry read back (the 40-region fleet's is about 6 MB)."""
_READ: dict[tuple[Path, str, bytes], Entry] = {}
"""Entries read in this process, by folder, key and seal: both sides of a review read the entry of every
unchanged stack; the second reads the file (its seal checked) but not its content again. Nothing mutates an
entry's report (preview_run puts it in the report as it is, and renders copies)."""


def present(cache_dir: Path, key: str) -> bool:
    """Whether an entry for `key` is there (not whether it is sound: `read` tells that)."""
    return _where(cache_dir, key).is_file()


def read(cache_dir: Path, key: str) -> Entry | None:
    """The entry for `key`, or None when absent or not sound (not sealed by this reviewer's key, wrong key, not an
    entry's shape, too large): a cache can make a review faster, never greener (gpuinfra.store.sealed)."""
    payload = read_sealed(_where(cache_dir, key), FORMAT, key, MAX_ENTRY_BYTES)
    if payload is None:
        return None
    memo = (cache_dir.resolve(), key, hashlib.sha256(payload).digest())
    found = _READ.get(memo)
    if found is not None:
        return found
    try:
        data = _Stored.model_validate_json(payload)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None
    if data.key != key:
        return None
    found = _READ[memo] = Entry(data.report, data.project, data.after_apply)
    return found


def write(cache_dir: Path, key: str, entry: Entry) -> None:
    """Store `entry` sealed and atomically; a cache that cannot be written is no error (the preview is made)."""
    body = {
        "key": key,
        "report": entry.report.model_dump(mode="json"),
        "project": entry.project,
        "after_apply": entry.after_apply,
    }
    write_sealed(_where(cache_dir, key), FORMAT, key, json.dumps(body, sort_keys=True).encode())


__all__ = ["FORMAT", "Entry", "Keys", "Peer", "entry_of", "peer", "present", "read", "write"]
