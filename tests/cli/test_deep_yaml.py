"""Deeply nested YAML where ruamel's C loader used to read it: its composer recurses in C, and 200,000 levels of
`[` overflowed the C stack, a segfault (exit 139) instead of exit 2. The per-stack cache's look at the organization
file (commands/stack_cache.py) now goes through the stack reader, which refuses past 64 levels, and the pack's
cluster rule (policy/rules/clusters.py) refuses a kubeconfig nested past 64 levels before its loader reads it.
The two that crashed run in subprocesses, so a crash fails the test, not the worker."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from helpers import ROOT, gpuinfra

DEEP = "[" * 200_000 + "]" * 200_000


def test_preview_with_a_deeply_nested_organization_file_exits_2(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("intents"))
    (tmp_path / "stacks" / "org.yaml").write_text(f"name: acme\naccounts: {DEEP}\n")
    done = gpuinfra("preview", "llm-train", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "org.yaml:2" in done.stderr and "nested deeper than 64 levels" in done.stderr


def test_a_deeply_nested_kubeconfig_is_refused_not_a_crash() -> None:
    """Refused by the cluster rule (fails closed: a kubeconfig it skipped would pass unchecked); a usual one is
    read as before."""
    code = (
        "from gpuinfra.policy.rules.clusters import kubeconfig_problems, _parsed\n"
        "print(kubeconfig_problems(None, 'a: ' + '[' * 200_000 + ']' * 200_000, False))\n"
        "print(_parsed('apiVersion: v1\\nclusters: []\\n'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    refused, usual = done.stdout.strip().splitlines()
    assert refused == "['its kubeconfig nests deeper than 64 levels, which the pack does not read']"
    assert usual == "{'apiVersion': 'v1', 'clusters': []}"


def test_a_deeply_nested_json_setting_stays_a_string() -> None:
    """Provider settings are JSON strings in the engine's graph (graph/views.py `decoded`): nested past the JSON
    decoder's recursion, one raised RecursionError through every policy that reads settings; it stays a string, and
    a kubeconfig so written is then refused by the cluster rule as above."""
    from gpuinfra.graph.views import decoded
    from gpuinfra.policy.rules.clusters import kubeconfig_problems

    deep = '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}"
    assert decoded(deep) == deep
    assert decoded('{"a": [1]}') == {"a": [1]}
    assert kubeconfig_problems(None, decoded(deep), False) == [  # type: ignore[arg-type]
        "its kubeconfig nests deeper than 64 levels, which the pack does not read"
    ]
