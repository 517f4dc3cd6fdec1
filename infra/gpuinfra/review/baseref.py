"""The base side of `gpuinfra diff --base-ref REF`: check REF out into a temporary git worktree and run that
revision's own `gpuinfra preview` on its own stacks, in a subprocess with the same Python environment.

Running the base revision's code (not HEAD's code on the base stacks) is what makes the diff honest: a change
to a component shows up as a change, as it will in `pulumi up`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from gpuinfra.errors import InputError, Problem
from gpuinfra.load import stack_names

TIMEOUT_S = 900
ENTRY = """
import importlib, pathlib, sys
root, name = pathlib.Path(sys.argv.pop(1)).resolve(), sys.argv.pop(1)
module = importlib.import_module(name)
where = pathlib.Path(module.__file__).resolve()
if not where.is_relative_to(root):
    sys.exit(f"refused: {name} was imported from {where}, not from the base revision at {root}")
try:
    templates = importlib.import_module(name + ".templates")
except ImportError:
    templates = None
for folder in getattr(templates, "__path__", []):
    if not pathlib.Path(folder).resolve().is_relative_to(root):
        sys.exit(f"refused: {name}.templates comes from {folder}, not from the base revision at {root}")
cli = importlib.import_module(name + ".cli")
getattr(cli, "run", cli.main)()
"""
"""Runs the base revision's own CLI (the installed script's entry, `run`, where the base has one; else `main`),
and refuses when Python would import any other gpuinfra (the installed one, the working tree's) for the package
or its templates: a base that silently ran the head's code would report every change as "unchanged"."""


def base_code(tree: Path, ref: str) -> tuple[Path, str]:
    """(the import root, the package name) of REF's own code: `infra/gpuinfra/` (with the top-level
    `templates/` linked in as `gpuinfra.templates`, as setuptools' package-dir maps it), or the older import
    name `infra`. Refused when REF has neither."""
    package = tree / "infra" / "gpuinfra"
    if (package / "cli.py").is_file():
        link = package / "templates"
        if (tree / "templates").is_dir() and not link.exists():
            link.symlink_to(tree / "templates", target_is_directory=True)
        return tree / "infra", "gpuinfra"
    if (tree / "infra" / "cli.py").is_file():
        return tree, "infra"
    raise InputError(
        [
            Problem(
                f"{ref} has no gpuinfra code (neither infra/gpuinfra/cli.py nor infra/cli.py): its stacks cannot "
                "be previewed by its own code, and previewing them with this code would hide every code change",
                hint="diff two documents instead: `gpuinfra diff base.json head.json`",
            )
        ]
    )


@contextmanager
def terminated_as_exit() -> Iterator[None]:
    """SIGTERM (a cancelled CI job) raises SystemExit in the main thread, so `finally` blocks remove the
    worktree and temporary folders; the previous handler is restored after."""
    if not threading_main():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def git(*args: str, cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError([Problem(f"git {' '.join(args)} failed: {exc}")]) from None
    if done.returncode != 0:
        raise InputError(
            [
                Problem(
                    f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}",
                    hint="--base-ref needs a git checkout and a commit, branch or tag",
                )
            ]
        )
    return done.stdout.strip()


def base_commit(ref: str, cwd: Path | None = None) -> tuple[Path, str]:
    """(the repository's top folder, REF's commit id), from `cwd` (the working directory)."""
    root = Path(git("rev-parse", "--show-toplevel", cwd=cwd or Path.cwd()))
    return root, git("rev-parse", "--verify", f"{ref}^{{commit}}", cwd=root)


CODE_FOLDERS = {"infra/gpuinfra/": "gpuinfra/", "templates/": "templates/"}
"""Where a revision keeps the package and its templates (base_code), and the names the running package gives
them (gpuinfra.store.fingerprint.package_blobs)."""


def same_code(root: Path, sha: str) -> bool:
    """Whether the commit's code (infra/gpuinfra/ and templates/) is the running package's, file for file and
    byte for byte: then the base previewed by this process is what the base's own code would make, and the
    subprocess (and its document, written and read back) can be skipped. Compared by git blob ids
    (`git ls-tree`, no checkout); anything git stores otherwise than as plain bytes (a symbolic link, a
    submodule) or a file only one side has counts as different code."""
    from gpuinfra.store.fingerprint import package_blobs

    listed: dict[str, str] = {}
    for entry in git("ls-tree", "-r", "-z", "--full-tree", sha, "--", *CODE_FOLDERS, cwd=root).split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, kind, blob = meta.split(" ")
        if "__pycache__" in path.split("/"):
            continue
        if kind != "blob" or mode not in ("100644", "100755"):
            return False
        prefix = next(p for p in CODE_FOLDERS if path.startswith(p))
        listed[CODE_FOLDERS[prefix] + path.removeprefix(prefix)] = blob
    return bool(listed) and listed == package_blobs()


@contextmanager
def checked_out(root: Path, sha: str) -> Iterator[Path]:
    """The commit checked out into a temporary git worktree, removed after (also on SIGTERM, under
    `terminated_as_exit`)."""
    tmp = Path(tempfile.mkdtemp(prefix="gpuinfra-base-"))
    tree = tmp / "tree"
    try:
        git("worktree", "add", "--detach", "--quiet", str(tree), sha, cwd=root)
        yield tree
    finally:
        # twice forced: `worktree add` locks a tree while it initializes (git-worktree(1), "remove")
        subprocess.run(
            ["git", "worktree", "remove", "--force", "--force", str(tree)],
            cwd=root,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True, timeout=120)
        remove_tree(tmp)


def base_preview(
    ref: str,
    stacks: list[str],
    out: Path,
    cwd: Path | None = None,
    flags: list[str] | None = None,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> tuple[str, list[str]]:
    """Write REF's preview JSON of `stacks` (those REF has; all of REF's when empty) to `out`, with the same
    `preview` flags as the head (--suppress, --policy-config, --usage-file); from `cache_dir` when it holds a
    sound entry for exactly these inputs (gpuinfra.review.cache), else previewed and stored there.
    `jobs` is handed to REF's code when it has the per-stack cache (`own_flags`).
    Returns a label for the base side and notes (stacks the base does not have)."""
    with base_preview_started(ref, stacks, out, cwd, flags, cache_dir, jobs) as finished:
        return finished()


@contextmanager
def base_preview_started(
    ref: str,
    stacks: list[str],
    out: Path,
    cwd: Path | None = None,
    flags: list[str] | None = None,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> Iterator[Callable[[], tuple[str, list[str]]]]:
    """`base_preview`, started: REF's own code previews in a subprocess while the caller goes on (`diff
    --base-ref --jobs N` previews the head meanwhile); the callable waits for it and returns what `base_preview`
    returns. Leaving the block stops the subprocess if it still runs and removes the worktree."""
    root, sha = base_commit(ref, cwd)
    key = None
    if cache_dir is not None:
        from gpuinfra.review import cache

        key = cache.base_key(git("rev-parse", f"{sha}^{{tree}}", cwd=root), stacks, flags or [])
        found = cache.read(cache_dir, key)
        if found is not None:
            out.write_text(found.document)
            yield lambda: (f"{ref} ({sha[:10]})", found.notes)
            return
    with _running(ref, sha, root, stacks, out, flags, cache_dir, jobs) as waited:

        def finished() -> tuple[str, list[str]]:
            label, notes = waited()
            if cache_dir is not None and key is not None:
                from gpuinfra.review import cache
                from gpuinfra.spec.files import read_text

                hint = "the base revision's preview wrote no readable document"
                document = read_text(out, "the base revision's preview", cache.MAX_DOCUMENT_BYTES, hint)
                cache.write(cache_dir, key, cache.Entry(label, notes, document))
            return label, notes

        yield finished


@contextmanager
def _running(
    ref: str,
    sha: str,
    root: Path,
    stacks: list[str],
    out: Path,
    flags: list[str] | None,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> Iterator[Callable[[], tuple[str, list[str]]]]:
    """REF's own code previewing its stacks in a temporary worktree (see base_preview), with `cache_dir` for
    its per-stack entries and `jobs` when that code takes them (`own_flags`). Its output goes to a file, not a
    pipe: nobody reads a pipe while the caller works, and a full one would stop the child."""
    with terminated_as_exit(), checked_out(root, sha) as tree, tempfile.TemporaryFile("w+") as log:
        child: subprocess.Popen[str] | None = None
        try:
            have = stack_names(tree)
            wanted = [s for s in stacks if s in have] if stacks else have
            notes = [f"stack {s} does not exist at {ref}: all its resources are new" for s in stacks if s not in have]
            path, name = base_code(tree, ref)
            command = [sys.executable, "-c", ENTRY, str(tree), name, "preview", *wanted]
            command += own_flags(path / name, cache_dir, jobs)
            child = subprocess.Popen(
                [*command, "--format", "json", "--out", str(out), *(flags or [])],
                cwd=tree,
                env=_base_env(tree, path),
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )

            def waited() -> tuple[str, list[str]]:
                assert child is not None
                child.wait(timeout=TIMEOUT_S)
                if not out.exists():
                    log.seek(0)
                    tail = log.read().strip().splitlines()[-5:]
                    raise InputError(
                        [
                            Problem(
                                f"the preview of {ref} ({sha[:10]}) by its own code failed (exit {child.returncode}): "
                                + " | ".join(tail),
                                hint="run `gpuinfra preview` at that revision to see why",
                            )
                        ]
                    )
                return f"{ref} ({sha[:10]})", notes

            yield waited
        finally:
            if child is not None and child.poll() is None:
                child.terminate()  # the base's CLI cleans up on SIGTERM too; a hard kill only if it hangs
                try:
                    child.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()


def _base_env(tree: Path, path: Path) -> dict[str, str]:
    """The base's code first on the path. Its bytecode goes beside the worktree, not into it
    (PYTHONPYCACHEPREFIX): compiled once by the base's main process, read by its workers, and never written into
    a tree being removed by a worker still importing (which recreated __pycache__ folders under the removal)."""
    env = {**os.environ, "PYTHONPATH": str(path), "PYTHONPYCACHEPREFIX": str(tree.parent / "bytecode")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def own_flags(package: Path, cache_dir: Path | None, jobs: int | None) -> list[str]:
    """`--cache-dir DIR` and `--jobs N` for the base revision's own `preview` when its code keeps each stack's
    preview by content (it has gpuinfra/commands/stack_cache.py, which came with that flag, after --jobs); older
    code takes neither and runs with its defaults. With the code unchanged, base and head compute the same keys,
    so the base reuses what the head (or an earlier review) stored for every stack whose inputs are unchanged."""
    if not (package / "commands" / "stack_cache.py").is_file():
        return []
    jobs_flag = ["--jobs", str(jobs)] if jobs is not None else []
    return jobs_flag + (["--cache-dir", str(cache_dir.resolve())] if cache_dir is not None else [])


def remove_tree(path: Path, tries: int = 5) -> None:
    """rmtree, again while something that outlived the preview (a worker the base's CLI started) still writes
    into it: a folder emptied under a writer fails with ENOTEMPTY once, then goes."""
    for attempt in range(tries):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.2 * (attempt + 1))


__all__ = [
    "base_code",
    "base_commit",
    "base_preview",
    "base_preview_started",
    "checked_out",
    "git",
    "own_flags",
    "remove_tree",
    "same_code",
    "terminated_as_exit",
]
