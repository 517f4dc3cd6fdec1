"""`gpuinfra diff`: two sides of a review (two documents, one `pulumi preview --json`, or a git ref against the
working tree), compared resource by resource and finding by finding, with the monthly cost change."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuinfra.catalog import load_catalog
from gpuinfra.commands.options import PreviewOptions
from gpuinfra.cost import Usage, load_usage_file
from gpuinfra.errors import InputError
from gpuinfra.load import PROJECT_FILE, project_dir, stack_names
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.model import DiffReport, InputProblem
from gpuinfra.review.diff import Snapshot, diff_sides
from gpuinfra.review.documents import (
    EXPORT,
    GPUINFRA,
    Side,
    load_document,
    pulumi_sides,
    side,
    unstepped_defaults,
)
from gpuinfra.review.effects import replacements
from gpuinfra.review.levels import with_levels

if TYPE_CHECKING:
    from gpuinfra.commands.pins import Pin
    from gpuinfra.commands.preview import PreviewRun


def diff_command(
    args: list[str],
    base_ref: str | None,
    org: Path | None,
    usage_file: Path | None,
    suppress: list[str] | None = None,
    policy_config: Path | None = None,
    cache_dir: Path | None = None,
    jobs: int = 1,
    base_code: str = "auto",
) -> DiffReport:
    """Two documents (base, head); one pulumi preview (its old and new states); or --base-ref REF [STACKS].
    Findings are judged with `policy_config` and `suppress` as `preview` judges them; a head stack that cannot be
    read is a problem of the report (exit 2), never a stack that went away."""
    from gpuinfra.policy.pack import pack_config
    from gpuinfra.validators.checked import check_suppress_ids

    suppress = suppress or []
    check_suppress_ids(suppress)
    policies = pack_config(policy_config) if policy_config is not None else None
    usage = load_usage_file(usage_file) if usage_file else Usage()
    catalog = load_catalog()
    notes: list[str] = []
    problems: list[InputProblem] = []
    if base_ref is not None:
        run = RunOptions(org, usage_file, usage, suppress, policy_config, cache_dir, jobs, check_base_code(base_code))
        base, head, labels = _from_ref(base_ref, args, run, notes, problems)
    elif len(args) == 2:
        base = side(load_document(Path(args[0])), "base", catalog, usage)
        head = side(load_document(Path(args[1])), "head", catalog, usage)
        labels = (_label(args[0]), _label(args[1]))
    elif len(args) == 1:
        doc = load_document(Path(args[0]))
        if doc.kind in (GPUINFRA, EXPORT):
            raise InputError.single(
                f"{args[0]} is a {doc.kind}: give a base and a head document, or --base-ref",
                hint="gpuinfra diff BASE.json HEAD.json, or gpuinfra diff --base-ref main",
            )
        base, head = pulumi_sides(doc, catalog, usage)
        labels = (f"{_label(args[0])} (old state)", f"{_label(args[0])} (planned)")
    else:
        raise InputError.single(
            "diff needs BASE.json HEAD.json, one pulumi preview --json document, or --base-ref REF",
            hint="gpuinfra diff --base-ref main --format markdown",
        )
    base = unstepped_defaults(base, head)
    notes += [*base.notes, *(n for n in head.notes if n not in base.notes)]
    problems += [InputProblem(stack=s, messages=list(m)) for s, m in head.unreadable.items()]
    base, head = with_levels(base, policies, suppress), with_levels(head, policies, suppress)
    return diff_report(
        diff_sides(base.stacks, head.stacks, replacements()), labels[0], labels[1], catalog, notes, problems
    )


def _label(arg: str) -> str:
    """A document as the review names it: relative to the working directory, else its file name (a comment
    never shows a runner's or a user's absolute path)."""
    path = Path(arg)
    if not path.is_absolute():
        return arg
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path.name


@dataclass(frozen=True)
class RunOptions:
    """How `--base-ref` previews each side: the same options on both."""

    org: Path | None
    usage_file: Path | None
    usage: Usage
    suppress: list[str]
    policy_config: Path | None
    cache_dir: Path | None = None
    """Where previews are kept by content: each stack's, on both sides (gpuinfra.commands.stack_cache; the base
    revision's code uses it when it has it), and the base side's whole document (gpuinfra.review.cache)."""
    jobs: int = 1
    """Stacks previewed at once, on the head side and by a base revision's code that takes --jobs."""
    base_code: str = "auto"
    """Which code previews the base (BASE_CODE)."""

    @property
    def options(self) -> PreviewOptions:
        return PreviewOptions.of(self.org, self.suppress, self.usage_file, self.policy_config)

    def flags(self) -> list[str]:
        """The options as `gpuinfra preview` flags, for the base revision's own code."""
        out = [f for rule in self.suppress for f in ("--suppress", rule)]
        if self.policy_config is not None:
            out += ["--policy-config", str(self.policy_config.resolve())]
        if self.usage_file is not None:
            out += ["--usage-file", str(self.usage_file.resolve())]
        return out


BASE_CODE = {
    "auto": "the base revision's own gpuinfra source when it has one (gpuinfra's own repository), else this gpuinfra",
    "installed": "this gpuinfra, whatever the base revision holds",
    "pinned": "the gpuinfra version the base revision pins (requirements.txt, pyproject.toml or a lock file), "
    "installed once into the user's cache directory",
}
"""`--base-code`: which code previews the base side of `--base-ref`."""


def check_base_code(value: str) -> str:
    if value not in BASE_CODE:
        raise InputError.single(f"--base-code {value!r} is not one of {', '.join(BASE_CODE)}", hint="--base-code auto")
    return value


def _from_ref(
    ref: str, stacks: list[str], run: RunOptions, notes: list[str], problems: list[InputProblem]
) -> tuple[Side, Side, tuple[str, str]]:
    """Base: REF's stacks previewed with REF's code when REF carries gpuinfra's source (gpuinfra's own
    repository: `_own_code_sides`), else (a team's repository) with this gpuinfra or the version REF pins
    (`_installed_code_sides`, `gpuinfra.commands.base_code`). Head: the working tree's preview, compared as it
    is in memory. A change of the gpuinfra version the repository pins is a note of the review."""
    from gpuinfra.commands.pins import pin_at, pin_in_tree, pin_notes
    from gpuinfra.review.baseref import base_commit, terminated_as_exit

    with terminated_as_exit(), tempfile.TemporaryDirectory(prefix="gpuinfra-org-") as trusted:
        root, sha = base_commit(ref)
        head_stacks = stacks or stack_names(project_dir() or Path.cwd())
        run = _trusted_organization(run, root, sha, Path(trusted), notes)
        label = f"{ref} ({sha[:10]})"
        if run.base_code == "auto" and has_own_code(root, sha):
            base_side, head_run, label = _own_code_sides(ref, root, sha, stacks, head_stacks, run, notes)
        else:
            base_pin = pin_at(root, sha)
            notes += pin_notes(base_pin, pin_in_tree(root), ref)
            base_side, head_run, more = _installed_code_sides(ref, root, sha, stacks, head_stacks, run, base_pin)
            notes += more
    problems += head_run.report.problems
    return base_side, Side("head", GPUINFRA, head_run.snapshots), (label, "working tree")


def has_own_code(root: Path, sha: str) -> bool:
    """Whether the commit carries gpuinfra's source (its CLI, where `review.baseref.base_code` looks for it)."""
    from gpuinfra.review.baseref import git

    return bool(git("ls-tree", "--name-only", sha, "--", "infra/gpuinfra/cli.py", "infra/cli.py", cwd=root))


def _own_code_sides(
    ref: str, root: Path, sha: str, stacks: list[str], head_stacks: list[str], run: RunOptions, notes: list[str]
) -> tuple[Side, PreviewRun, str]:
    """gpuinfra's own repository: REF's stacks previewed with REF's code: this process's when it is the same
    byte for byte (`_same_code_sides`), else REF's own code in a subprocess (`_base_side`). With `--jobs N`
    (N > 1) the two sides run at once: the head's stacks previewing in workers while this process reads the
    base's from the cache, or, the code changed, the jobs shared with REF's subprocess."""
    from gpuinfra.commands.preview import preview_run
    from gpuinfra.review.baseref import same_code

    made = _same_code_sides(ref, root, sha, stacks, head_stacks, run) if same_code(root, sha) else None
    if made is not None:
        base_side, head_run, more = made
        notes += more
        return base_side, head_run, f"{ref} ({sha[:10]})"
    with _base_side(ref, stacks, run, notes) as (base, head_jobs):
        head_run = preview_run(head_stacks, run.options, head_jobs, run.cache_dir)
        base_side, label = base()
    return base_side, head_run, label


def _installed_code_sides(
    ref: str,
    root: Path,
    sha: str,
    stacks: list[str],
    head_stacks: list[str],
    run: RunOptions,
    pin: Pin | None,
) -> tuple[Side, PreviewRun, list[str]]:
    """A team's repository (no gpuinfra source at REF): REF checked out and its stacks (read from the checkout
    by the workspace's bounded reader, judged by REF's organization file) previewed by this gpuinfra, or with
    `--base-code pinned` by the version REF pins. A REF without the project or without stacks is an empty base:
    every head stack is new."""
    from gpuinfra import __version__
    from gpuinfra.commands.preview import preview_run

    where = _project_in_repository(root)
    if run.base_code == "pinned":
        from gpuinfra.commands.base_code import pinned_base

        if pin is None:
            raise InputError.single(
                f"--base-code pinned: {ref} pins no gpuinfra version (gpuinfra==X in requirements.txt, "
                "pyproject.toml or a lock file)",
                hint="pin gpuinfra in requirements.txt at the base, or leave --base-code out",
            )
        if pin.version != __version__:
            base_side, more = pinned_base(ref, root, sha, where, stacks, run.flags(), run.usage, pin)
            head_run = preview_run(head_stacks, run.options, run.jobs, run.cache_dir)
            return base_side, head_run, more
    code = f"this gpuinfra ({__version__})"
    said = [f"{ref} has no gpuinfra code of its own: its stacks are previewed by {code}, as the head's are"]
    if pin is not None and pin.version != __version__ and run.base_code != "pinned":
        said.append(f"{ref} pins {pin.text()}: --base-code pinned previews the base with that version")
    made = _same_code_sides(ref, root, sha, stacks, head_stacks, run, where)
    if made is not None:
        base_side, head_run, more = made
        return base_side, head_run, [*said, *more]
    head_run = preview_run(head_stacks, run.options, run.jobs, run.cache_dir)
    missing = [f"stack {s} does not exist at {ref}: all its resources are new" for s in (stacks or head_stacks)]
    return Side("base", GPUINFRA, {}), head_run, [*said, *missing]


def _project_in_repository(root: Path) -> Path:
    """Where the Pulumi project sits in the repository (`.` at its top; a folder of a larger repository)."""
    project = project_dir() or Path.cwd()
    try:
        return project.resolve().relative_to(root.resolve())
    except ValueError:
        return Path(".")


def _trusted_organization(run: RunOptions, root: Path, sha: str, folder: Path, notes: list[str]) -> RunOptions:
    """The head's stacks judged by the base's organization file when the change edits it (and no --org names
    one): the change to the file is shown as its own part of the review (gpuinfra.review.organization)."""
    from gpuinfra.load import ORG_FILE_NAME, stacks_dir
    from gpuinfra.review.organization import organization_change

    project = project_dir()
    if run.org is not None or project is None:
        return run
    change = organization_change(root, sha, stacks_dir(project) / ORG_FILE_NAME)
    if change is None:
        return run
    base = folder / ORG_FILE_NAME
    base.write_bytes(change.base)
    notes += change.notes()
    return dataclasses.replace(run, org=base)


@contextmanager
def _base_side(
    ref: str, stacks: list[str], run: RunOptions, notes: list[str]
) -> Iterator[tuple[Callable[[], tuple[Side, str]], int]]:
    """REF's own code previews REF's stacks in a subprocess and writes the document (gpuinfra.review.baseref):
    before the head with one job, beside it with half of several. Yields the side read back (the callable waits
    for it) and the jobs left for the head."""
    from gpuinfra.review.baseref import base_preview_started

    catalog = load_catalog()
    beside = run.jobs // 2
    with tempfile.TemporaryDirectory(prefix="gpuinfra-diff-") as tmp:
        out = Path(tmp) / "base.json"
        flags, jobs = run.flags(), beside or run.jobs
        with base_preview_started(ref, stacks, out, flags=flags, cache_dir=run.cache_dir, jobs=jobs) as started:

            def read() -> tuple[Side, str]:
                label, more = started()
                notes.extend(more)
                return side(load_document(out, own=True), "base", catalog, run.usage), label

            if beside:
                yield read, run.jobs - beside
            else:
                done = read()
                yield (lambda: done), run.jobs


def _same_code_sides(
    ref: str,
    root: Path,
    sha: str,
    stacks: list[str],
    head_stacks: list[str],
    run: RunOptions,
    where: Path = Path("."),
) -> tuple[Side, PreviewRun, list[str]] | None:
    """REF's code is the running code: REF checked out and its stacks previewed here, with the options the
    subprocess would be given (its `preview` flags: no --org; the files named resolved first), inside the
    checkout as the subprocess runs, through the same per-stack cache as the head. The head's stacks that
    neither the cache nor the base will hold start in worker processes first, so they preview while this
    process reads the base. The base side is what the subprocess's document reads back as (`as_document`),
    without writing, reading or pricing it again: an unchanged stack's snapshot is the head's
    (stack_cache.Entry.snapshot). None when none of `stacks` is at REF: the subprocess path decides what that
    means."""
    from gpuinfra.commands.preview import cache_keys, preview_run, preview_started
    from gpuinfra.review.baseref import checked_out

    options = run.options.resolved()
    with checked_out(root, sha) as checkout:
        tree = checkout / where
        have = stack_names(tree) if (tree / PROJECT_FILE).is_file() else []
        wanted = [s for s in stacks if s in have] if stacks else have
        if not wanted:
            return None
        cache = run.cache_dir.resolve() if run.cache_dir is not None else None
        with _inside(tree):
            later = cache_keys(wanted, options) if cache is not None else set()
        with preview_started(head_stacks, run.options, run.jobs, run.cache_dir, later=later) as finish_head:
            with _inside(tree):
                made = preview_run(wanted, options, run.jobs, cache)
            done = finish_head()
    notes = [f"stack {s} does not exist at {ref}: all its resources are new" for s in stacks if s not in have]
    return as_document(made.report.problems, made.snapshots, "base"), done, notes


def as_document(problems: list[InputProblem], snapshots: dict[str, Snapshot], label: str) -> Side:
    """A side made in memory as `gpuinfra_side` reads the same preview's document: the previewed stacks in
    order, then each stack that could not be read (no graph, unknown money) with a note."""
    stacks = dict(snapshots)
    unreadable = {p.stack: tuple(p.messages) for p in problems}
    for name in unreadable:
        stacks.setdefault(name, Snapshot(name, None))
    notes = tuple(f"{label} {p.stack}: cannot be read ({'; '.join(p.messages)})" for p in problems)
    return Side(label, GPUINFRA, stacks, notes, unreadable)


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """The working directory set to `folder` (stack names and paths are found from it, as in the subprocess)."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


__all__ = ["BASE_CODE", "diff_command", "has_own_code"]
