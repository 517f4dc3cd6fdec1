"""A repository at scale for `python -m bench.process repo`: 200 generated stacks in a scratch git repository that
also holds the package's code (so `diff --base-ref` previews the base with the base's own code, as in CI).

Layout: the model registry, and 199 stacks in 40 team accounts of 5 stacks each (the last has 4): training
clusters (Slurm on AWS, 2 to 32 p5.48xlarge) in the even accounts, inference fleets (1 to 4 real regions) in the
odd ones. Accounts matter to the cost of a review: a stack's quota and budget ledgers read every other stack of
its account, so a change to one stack previews its account's stacks again (gpuinfra.commands.stack_cache).
"""

from __future__ import annotations

import copy
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.synthetic import ROOT, _dump, _load

STACKS = 200
PER_ACCOUNT = 5
TRAIN_NODES = (4, 8, 12, 16, 32)
FLEET_REGIONS = ("us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1")
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]
CHANGED = "fleet-005"
"""The stack a review changes: a fleet whose first region may scale two replicas further."""


def account(k: int) -> tuple[str, str, dict[str, Any]]:
    """(name, id, body) of team account `k`: training in the even ones, inference in the odd."""
    ident = str(100000000000 + k)
    training = k % 2 == 0
    quotas = (
        {"us-east-1": {"L-417A185B": 10**6, "L-C4BD4855": 10**6, "L-1216C47A": 10**4}}
        if training
        else {r: {"L-DB2E81BA": 10**5, "L-3819A6DF": 10**5} for r in FLEET_REGIONS}
    )
    body = {
        "id": ident,
        "role_arn": f"arn:aws:iam::{ident}:role/gpuinfra-deploy",
        "purpose": "training" if training else "inference",
        "monthly_budget_usd": 10**9,
        "quotas": quotas,
    }
    return f"team-{k:02d}", ident, body


def org(stacks: Path, accounts: int) -> None:
    data = _load(ROOT / "stacks" / "org.yaml")
    for k in range(accounts):
        name, _, body = account(k)
        data["accounts"][name] = body
    _dump(data, stacks / "org.yaml")


def fleet(stacks: Path, name: str, team: str, ident: str, regions: int) -> None:
    data = _load(ROOT / "stacks" / "Pulumi.chat-serve.yaml")
    spec = data["config"]["gpuinfra:inference"]
    spec.update(name=name, account=team)
    template = spec["regions"][0]
    spec["regions"] = []
    for code in FLEET_REGIONS[:regions]:
        region = copy.deepcopy(template)
        region.pop("instance_type", None)
        region.update(region=code, certificate_arn=f"arn:aws:acm:{code}:{ident}:certificate/bench-{code}")
        spec["regions"].append(region)
    _dump(data, stacks / f"Pulumi.{name}.yaml")


def cluster(stacks: Path, name: str, team: str, nodes: int) -> None:
    """A Slurm cluster of `nodes` nodes, checkpointing at the planner's optimum (spot intervals are bounded)."""
    from gpuinfra.workspace.check import check_stack

    data = _load(ROOT / "stacks" / "Pulumi.llm-train.yaml")
    spec = data["config"]["gpuinfra:training"]
    spec.update(name=name, account=team)
    spec["compute"]["node_count"] = nodes
    # the shape the bench has measured since it began: a spot gang over an on-demand base (the example has
    # put its gang on a reservation since #48; one reservation id cannot serve every synthetic cluster)
    spec["compute"]["capacity"] = {"type": "spot", "on_demand_base": max(1, nodes // 4)}
    path = _dump(data, stacks / f"Pulumi.{name}.yaml")
    checkpoint = check_stack(path).plan.checkpoint  # type: ignore[union-attr]
    if checkpoint is not None:
        spec["checkpointing"]["interval_minutes"] = max(1, round(checkpoint.young_interval_minutes))
        _dump(data, path)


def stacks(folder: Path, count: int = STACKS) -> list[str]:
    """Write the registry and `count` - 1 team stacks with their organization file; their names."""
    folder.mkdir(parents=True, exist_ok=True)
    accounts = -(-(count - 1) // PER_ACCOUNT)
    org(folder, accounts)
    shutil.copy(ROOT / "stacks" / "Pulumi.model-registry.yaml", folder / "Pulumi.model-registry.yaml")
    names = ["model-registry"]
    for i in range(count - 1):
        team, ident, _ = account(i // PER_ACCOUNT)
        if (i // PER_ACCOUNT) % 2 == 0:
            name = f"train-{i:03d}"
            cluster(folder, name, team, TRAIN_NODES[i % len(TRAIN_NODES)])
        else:
            name = f"fleet-{i:03d}"
            fleet(folder, name, team, ident, 1 + i % len(FLEET_REGIONS))
        names.append(name)
    return names


def package_copy(into: Path) -> None:
    """The installed package's files (and its templates) as the repository's code: the same bytes, so the
    base's code fingerprint is the head's and their per-stack cache keys agree."""
    import gpuinfra
    import gpuinfra.templates

    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(gpuinfra.__path__[0]), into / "infra" / "gpuinfra", ignore=ignore)
    shutil.copytree(Path(gpuinfra.templates.__path__[0]), into / "templates", ignore=ignore)


def repository(folder: Path, count: int = STACKS) -> tuple[Path, list[str]]:
    """A git repository: Pulumi.yaml, the code, `count` stacks; one commit."""
    root = folder / "repo"
    root.mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    package_copy(root)
    names = stacks(root / "stacks", count)
    commit(root, "200 stacks")
    return root, names


def commit(root: Path, message: str) -> None:
    if not (root / ".git").exists():
        subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=root, check=True)


def change_stack(root: Path, name: str = CHANGED) -> None:
    """One real change in the working tree: the stack's first region may scale two replicas further."""
    path = root / "stacks" / f"Pulumi.{name}.yaml"
    data = _load(path)
    data["config"]["gpuinfra:inference"]["regions"][0]["max_replicas"] += 2
    _dump(data, path)


def change_code(root: Path) -> None:
    """A code change on the base revision (a comment): every stack's key differs between base and head."""
    init = root / "infra" / "gpuinfra" / "__init__.py"
    init.write_text(init.read_text() + "\n# bench: a change to the code\n")
    commit(root, "a code change")


REVIEW_OVER_ONE = 3.0
"""Issue 31: `diff --base-ref` with one stack changed at most 3x the whole-process preview of that stack."""
JOBS_SPEEDUP = 1.7
"""Issue 31: with the code changed, `--jobs 2` at least 1.7x faster than `--jobs 1`."""


@dataclass(frozen=True)
class Figures:
    stacks: int
    review_s: list[float]
    """`diff --base-ref HEAD --cache-dir` with one stack changed, the code unchanged, the cache warm."""
    one_s: list[float]
    """The whole-process `preview` of the changed stack alone (no cache)."""
    serial_s: float
    """With the code changed: `diff --base-ref HEAD --jobs 1`."""
    parallel_s: float
    """The same with `--jobs 2`."""
    loads: tuple[float, ...] = ()
    """The 1-minute load average before each timed run, in order (the cores are shared)."""
    review_mb: list[float] = field(default_factory=list)
    """Peak resident memory of each review: its largest process (the review or one of its workers)."""
    changed_mb: tuple[float, float] = (0.0, 0.0)
    """The same for the code-changed reviews, `--jobs 1` and `--jobs 2`."""

    @property
    def review_ratio(self) -> float:
        return statistics.median(self.review_s) / statistics.median(self.one_s)

    @property
    def speedup(self) -> float:
        return self.serial_s / self.parallel_s

    def misses(self) -> list[str]:
        out = []
        if self.review_ratio > REVIEW_OVER_ONE:
            out.append(f"review of one changed stack in {self.stacks}: {self.review_ratio:.2f}x its preview")
        if self.speedup < JOBS_SPEEDUP:
            out.append(f"--jobs 2 over --jobs 1 with the code changed: {self.speedup:.2f}x")
        return out

    def markdown(self) -> str:
        def spread(values: list[float]) -> str:
            return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

        mark = {True: "met", False: "MISSED"}
        return "\n".join(
            [
                f"{self.stacks} generated stacks in a scratch git repository with the package's code (`bench/repo.py`:"
                " the model registry, and Slurm clusters and inference fleets of mixed sizes in team accounts of"
                f" 5 stacks each); `{CHANGED}`'s first region may scale two replicas further in the working tree."
                " Whole processes, wall seconds, median (min-max).",
                "",
                "| command | seconds |",
                "|---|---:|",
                f"| `diff --base-ref HEAD --cache-dir C` (one stack changed, code unchanged, cache warm) |"
                f" {spread(self.review_s)} |",
                f"| `preview {CHANGED}` (the changed stack alone, no cache) | {spread(self.one_s)} |",
                f"| code changed: `diff --base-ref HEAD --jobs 1` (no cache, an empty GPUINFRA_CACHE_DIR) |"
                f" {self.serial_s:.2f} |",
                f"| code changed: `diff --base-ref HEAD --jobs 2` (no cache, an empty GPUINFRA_CACHE_DIR) |"
                f" {self.parallel_s:.2f} |",
                "",
                f"Review / one preview: {self.review_ratio:.2f} ({mark[self.review_ratio <= REVIEW_OVER_ONE]},"
                f" <= {REVIEW_OVER_ONE:g}x). `--jobs 1` / `--jobs 2`: {self.speedup:.2f}"
                f" ({mark[self.speedup >= JOBS_SPEEDUP]}, >= {JOBS_SPEEDUP:g}x).",
                "",
                f"Peak resident memory (the largest process of each run, from wait4's rusage): the review"
                f" {statistics.median(self.review_mb):.0f} MB (median), code changed {self.changed_mb[0]:.0f} MB"
                f" (`--jobs 1`) and {self.changed_mb[1]:.0f} MB per process (`--jobs 2`: the main process and"
                " two workers, each at most that).",
                "",
                f"Load average (1 min) before each timed run: {', '.join(f'{x:.1f}' for x in self.loads)}"
                " (2 cores; figures taken under load are not comparable with idle ones).",
                "",
                "The warm cache is what CI's cache step restores: every stack previewed at the base commit"
                " (`preview --cache-dir C`), so each review finds the base's stacks and the head's unchanged ones;"
                " what the review itself stores is removed before each run. With the code unchanged the base is"
                " previewed in the review's own process from those entries (no subprocess: `review.baseref."
                "same_code`). The changed stack's account's other stacks are previewed again on the head side:"
                " their quota and budget ledgers read it. Both rows run with the machine's warm"
                " GPUINFRA_CACHE_DIR (stack files' parses, the siblings' plans and totals), as a developer's does.",
            ]
        )


LOADS: list[float] = []
PEAKS_MB: list[float] = []
"""Each run's peak resident memory, in order (see `_run`)."""


PEAK_WRAPPER = (
    "import os, sys\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)\n"
)
"""Runs the command and writes its peak resident memory (KiB) to a file. Linux carries a process's high-water mark
across exec, so a command spawned straight from a large process (a pytest worker, a bench that has previewed) would
report that process's size; spawned from this small interpreter, it reports at least only this one's (~10 MB)."""


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Wall seconds of one whole-process run; its peak resident memory goes to PEAKS_MB. wait4 reports the largest
    resident set of the process and of the descendants it waited for (its workers), so this is the largest single
    process of the run, not the sum of those running at once."""
    LOADS.append(os.getloadavg()[0])
    with tempfile.TemporaryDirectory() as scratch:
        peak, errors = Path(scratch) / "peak", Path(scratch) / "stderr"
        start = time.perf_counter()
        with errors.open("wb") as sink:
            done = subprocess.run(
                [sys.executable, "-c", PEAK_WRAPPER, str(peak), *command],
                cwd=cwd,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1):
            tail = errors.read_bytes().decode(errors="replace").strip()[-600:]
            raise SystemExit(f"bench: {' '.join(command)} exited {done.returncode}: {tail}")
        PEAKS_MB.append(int(peak.read_text()) / 1024)  # KiB on Linux
    return seconds


def _forget(cache: Path, kept: set[Path]) -> None:
    """Remove what a review stored since the cache was warmed."""
    for path in cache.rglob("*"):
        if path.is_file() and path not in kept:
            path.unlink()


def fresh(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env` with an empty on-disk cache of its own in `folder` (GPUINFRA_CACHE_DIR: preflight's definitions,
    stack files' parses, the ledgers' totals of other stacks): the `--jobs 2` run would otherwise read what the
    `--jobs 1` run stored for the base's changed code, and look faster than it is."""
    return {**env, "GPUINFRA_CACHE_DIR": str(folder)}


def measure(runs: int, folder: Path, count: int = STACKS) -> Figures:
    """The repository's rows (see `Figures`); prints progress, as the whole takes minutes."""
    from bench.cli_help import _console_script

    cli = _console_script()
    # No default review cache (the CLI keeps previews under the user's cache since issue 51): the single preview
    # and the code-changed reviews are measured without one; the warm review names its --cache-dir.
    env = {**os.environ, "COLUMNS": "100", "GPUINFRA_CACHE": "off"}
    root, names = repository(folder, count)
    cache = folder / "cache"
    print(f"repo: {len(names)} stacks written; warming the cache (preview --cache-dir, every stack)", flush=True)
    _run([*cli, "preview", "--jobs", "2", "--cache-dir", str(cache), "--format", "json"], root, env)
    kept = {p for p in cache.rglob("*") if p.is_file()}
    change_stack(root)
    review = [*cli, "diff", "--base-ref", "HEAD", "--cache-dir", str(cache), "--format", "markdown"]
    one = [*cli, "preview", CHANGED, "--format", "json"]
    _run(one, root, env)  # a warm-up: the OS's file cache
    LOADS.clear()
    review_s, one_s, review_mb = [], [], []
    for _ in range(runs):
        _forget(cache, kept)
        review_s.append(_run(review, root, env))
        review_mb.append(PEAKS_MB[-1])
        one_s.append(_run(one, root, env))
        print(f"repo: review {review_s[-1]:.2f} s, one preview {one_s[-1]:.2f} s", flush=True)
    change_code(root)
    changed = [*cli, "diff", "--base-ref", "HEAD", "--format", "markdown", "--jobs"]
    serial = _run([*changed, "1"], root, fresh(env, folder / "compiled-jobs1"))
    serial_mb = PEAKS_MB[-1]
    print(f"repo: code changed, --jobs 1 {serial:.2f} s", flush=True)
    parallel = _run([*changed, "2"], root, fresh(env, folder / "compiled-jobs2"))
    print(f"repo: code changed, --jobs 2 {parallel:.2f} s", flush=True)
    return Figures(len(names), review_s, one_s, serial, parallel, tuple(LOADS), review_mb, (serial_mb, PEAKS_MB[-1]))


__all__ = ["CHANGED", "STACKS", "Figures", "change_code", "change_stack", "measure", "repository", "stacks"]
