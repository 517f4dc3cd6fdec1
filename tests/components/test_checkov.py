"""checkov, a second reader of the Kubernetes objects we generate (issue 47): every check it fails on the three
Kubernetes examples' manifests (tools/k8s_manifests.py: every object the programs register, and the JobSets their
ConfigMaps carry, as batch/v1 Jobs) is a row of docs/security.md's table with the reason, and every row of the table
still fails (a fixed one leaves the table). So a new failure, from our manifests or a new checkov in the pinned range,
fails here until it is fixed or stated.

checkov pins a boto3/botocore older than the one preflight judges requests by, so it lives in a virtual environment
of its own, `.venv-checkov` (made by `make test` from tools/checkov/requirements.txt); CI fails without it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import ROOT

CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
DOC = ROOT / "docs" / "security.md"
ROLES = {
    "pruner": r"--CronJob--.*-pruner\.yaml$",
    "remediation": r"--CronJob--.*-gpu-remediation-cronjob\.yaml$",
    "trainers": r"--Job--.*-job-template-workers\.yaml$",
    "acceptance": r"--Job--.*-nccl-acceptance-nccl\.yaml$",
    "servers": r"--Deployment--.*-server\.yaml$",
}
"""The docs' names for the pods, by the file tools/k8s_manifests.py writes each to."""
ROW = re.compile(r"^\| (CKV_K8S_\d+(?:, CKV_K8S_\d+)*) \| ((?:`\w+`(?:, )?)+) \| (.+) \|$", re.M)


def checkov() -> Path:
    if CHECKOV.exists():
        return CHECKOV
    found = shutil.which("checkov")
    if found:
        return Path(found)
    if os.environ.get("CI"):
        pytest.fail(f"checkov is not installed: make test makes {CHECKOV.parent.parent.name} (tools/checkov)")
    pytest.skip("checkov is not installed: `make test` installs it into .venv-checkov")


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("k8s_manifests", ROOT / "tools" / "k8s_manifests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def role(file_path: str) -> str:
    for name, pattern in ROLES.items():
        if re.search(pattern, file_path):
            return name
    return f"unnamed object {Path(file_path).name}"


def failures(report: Any) -> dict[tuple[str, str], set[str]]:
    """(check, role) -> the files failing it, from checkov's JSON (one report, or a list of one per framework)."""
    reports = report if isinstance(report, list) else [report]
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for one in reports:
        for failed in one["results"]["failed_checks"]:
            found[failed["check_id"], role(failed["file_path"])].add(Path(failed["file_path"]).name)
    return found


def documented() -> dict[tuple[str, str], str]:
    """(check, role) -> the reason docs/security.md gives."""
    rows: dict[tuple[str, str], str] = {}
    for checks, roles, why in ROW.findall(DOC.read_text()):
        for check in checks.split(", "):
            for name in re.findall(r"`(\w+)`", roles):
                assert (check, name) not in rows, f"docs/security.md lists {check} for {name} twice"
                rows[check, name] = why
    return rows


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[tuple[str, str], set[str]], dict[str, Any]]:
    out = tmp_path_factory.mktemp("manifests")
    assert tool().main([str(out)]) == 0
    done = subprocess.run(
        [str(checkov()), "-d", str(out), "--framework", "kubernetes", "--skip-download", "--quiet", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: some check failed
    report = json.loads(done.stdout)
    summary = (report[0] if isinstance(report, list) else report)["summary"]
    return failures(report), summary


def test_checkov_reads_every_manifest(scanned) -> None:  # type: ignore[no-untyped-def]
    _, summary = scanned
    assert summary["parsing_errors"] == 0
    assert summary["resource_count"] >= 90  # 3 stacks: ~40 objects each with the JobSets' Jobs (100 at this commit)
    assert summary["passed"] > 500


def test_every_failure_is_stated_with_its_reason(scanned) -> None:  # type: ignore[no-untyped-def]
    found, _ = scanned
    rows = documented()
    missing = {key: sorted(files) for key, files in found.items() if key not in rows}
    assert not missing, f"checkov failures docs/security.md does not state (fix them or add a row): {missing}"
    assert all(len(why) > 40 for why in rows.values()), "every row says why, in a sentence"


def test_every_stated_failure_still_fails(scanned) -> None:  # type: ignore[no-untyped-def]
    found, _ = scanned
    stale = sorted(key for key in documented() if key not in found)
    assert not stale, f"docs/security.md lists failures checkov no longer raises (remove the rows): {stale}"


def test_the_table_names_only_known_pods() -> None:
    assert {name for _, name in documented()} <= set(ROLES)
