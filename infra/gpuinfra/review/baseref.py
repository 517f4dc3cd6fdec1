"""The base side of `gpuinfra diff --base-ref REF`: check REF out into a temporary git worktree and run that
revision's own `gpuinfra preview` on its own stacks, in a subprocess with the same Python environment.

Running the base revision's code (not HEAD's code on the base stacks) is what makes the diff honest: a change
to a component shows up as a change, as it will in `pulumi up`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpuinfra.errors import InputError, Problem
from gpuinfra.load import stack_names

TIMEOUT_S = 900
LAYOUTS = (
    ("infra/gpuinfra/cli.py", "infra", "gpuinfra"),  # the source root infra/, import name gpuinfra
    ("infra/cli.py", ".", "infra"),  # before the package was renamed: import name infra at the top level
)
"""Where a revision keeps its code: (file that marks the layout, folder to put on sys.path, import name)."""


def base_code(tree: Path, ref: str) -> tuple[Path, str]:
    """The folder to import the base's own package from, and the command that runs its CLI; a revision
    without gpuinfra's code is refused rather than previewed by the installed code."""
    for marker, root, package in LAYOUTS:
        if (tree / marker).is_file():
            return (tree / root).resolve(), f"from {package}.cli import main; main()"
    raise InputError(
        [
            Problem(
                f"{ref} has no gpuinfra code to preview its stacks with",
                hint="give --base-ref a revision of this project",
            )
        ]
    )


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


def base_preview(
    ref: str, stacks: list[str], out: Path, cwd: Path | None = None, flags: list[str] | None = None
) -> tuple[str, list[str]]:
    """Write REF's preview JSON of `stacks` (those REF has; all of REF's when empty) to `out`, with the same
    `preview` flags as the head (--suppress, --policy-config, --usage-file).
    Returns a label for the base side and notes (stacks the base does not have)."""
    cwd = cwd or Path.cwd()
    root = Path(git("rev-parse", "--show-toplevel", cwd=cwd))
    sha = git("rev-parse", "--verify", f"{ref}^{{commit}}", cwd=root)
    tmp = Path(tempfile.mkdtemp(prefix="gpuinfra-base-"))
    tree = tmp / "tree"
    try:  # everything after mkdtemp: a signal during `git worktree add` still removes the worktree
        git("worktree", "add", "--detach", "--quiet", str(tree), sha, cwd=root)
        have = stack_names(tree)
        wanted = [s for s in stacks if s in have] if stacks else have
        notes = [f"stack {s} does not exist at {ref}: all its resources are new" for s in stacks if s not in have]
        source, entry = base_code(tree, ref)
        env = {**os.environ, "PYTHONPATH": str(source)}
        done = subprocess.run(
            [sys.executable, "-c", entry, "preview", *wanted, "--format", "json", "--out", str(out), *(flags or [])],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        if not out.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise InputError(
                [
                    Problem(
                        f"the preview of {ref} ({sha[:10]}) failed (exit {done.returncode}): " + " | ".join(tail),
                        hint="run `gpuinfra preview` at that revision to see why",
                    )
                ]
            )
        return f"{ref} ({sha[:10]})", notes
    finally:
        # twice forced: `worktree add` locks a tree while it initializes (git-worktree(1), "remove")
        subprocess.run(
            ["git", "worktree", "remove", "--force", "--force", str(tree)], cwd=root, capture_output=True, timeout=120
        )
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True, timeout=120)  # a half-added one


__all__ = ["base_preview", "git"]
