"""`diff --base-ref REF --base-code pinned`: REF's stacks previewed by the gpuinfra version REF pins, so a pull
request that raises the pin shows what the new version changes as well as what the stack edits change.

The pinned version is installed once (`python -m venv` and `pip install gpuinfra==X`, with the user's own pip
configuration: index, mirrors, certificates) into the user's cache directory and kept there by version; it runs
`gpuinfra preview --format json` in REF's checkout, and its document is read back like any other."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from gpuinfra.errors import InputError

if TYPE_CHECKING:
    from gpuinfra.commands.pins import Pin
    from gpuinfra.cost import Usage
    from gpuinfra.review.documents import Side

INSTALL_TIMEOUT_S = 1800
PREVIEW_TIMEOUT_S = 900


def user_cache_dir() -> Path:
    """GPUINFRA_CACHE_DIR, else the XDG cache directory's gpuinfra folder (as gpuinfra.store.disk keeps its own)."""
    explicit = os.environ.get("GPUINFRA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpuinfra"


def pinned_environment(version: str) -> Path:
    """The `gpuinfra` script of a virtual environment holding gpuinfra==`version`, made on first use. A folder
    counts only once its install finished (a stamp written last), so an interrupted install is redone."""
    folder = user_cache_dir() / "base-code" / version
    script = folder / "bin" / "gpuinfra"
    stamp = folder / ".installed"
    if stamp.is_file() and script.is_file():
        return script
    steps = (
        [sys.executable, "-m", "venv", "--clear", str(folder)],
        [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", f"gpuinfra=={version}"],
    )
    for step in steps:
        done = _run(step, INSTALL_TIMEOUT_S, None)
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-4:])
            raise InputError.single(
                f"--base-code pinned: cannot install gpuinfra=={version}: {tail}",
                file=folder,
                hint="check that your package index has that version (pip config list), or leave --base-code out",
            )
    stamp.write_text(version + "\n")
    return script


def _run(command: list[str], timeout: int, cwd: Path | None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(command, 1, "", str(exc))


def pinned_base(
    ref: str, root: Path, sha: str, where: Path, stacks: list[str], flags: list[str], usage: Usage, pin: Pin
) -> tuple[Side, list[str]]:
    """REF's stacks previewed by gpuinfra==pin.version in REF's checkout, with the head's `preview` flags; the
    side and its notes."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.load import PROJECT_FILE, stack_names
    from gpuinfra.review.baseref import checked_out
    from gpuinfra.review.documents import GPUINFRA, Side, load_document, side

    script = pinned_environment(pin.version)
    said = [f"{ref}'s stacks are previewed by the gpuinfra it pins, {pin.text()}"]
    with checked_out(root, sha) as checkout, tempfile.TemporaryDirectory(prefix="gpuinfra-pinned-") as tmp:
        tree = checkout / where
        have = stack_names(tree) if (tree / PROJECT_FILE).is_file() else []
        wanted = [s for s in stacks if s in have] if stacks else have
        said += [f"stack {s} does not exist at {ref}: all its resources are new" for s in stacks if s not in have]
        if not wanted:
            return Side("base", GPUINFRA, {}), said
        out = Path(tmp) / "base.json"
        command = [str(script), "preview", *wanted, "--format", "json", "--out", str(out), *flags]
        done = _run(command, PREVIEW_TIMEOUT_S, tree)
        if not out.is_file():
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-4:])
            raise InputError.single(
                f"the preview of {ref} ({sha[:10]}) by gpuinfra {pin.version} failed (exit {done.returncode}): {tail}",
                hint=f"run `gpuinfra preview` with gpuinfra=={pin.version} at that revision to see why",
            )
        return side(load_document(out, own=True), "base", load_catalog(), usage), said


__all__ = ["pinned_base", "pinned_environment", "user_cache_dir"]
