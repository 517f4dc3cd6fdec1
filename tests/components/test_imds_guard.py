"""IMDS closed to jobs, open to root, on a PCS node: the imds-guard boot script run as systemd runs it (root,
systemd's default PATH) in a private network namespace where 169.254.169.254 answers on loopback; then a root
process (the PCS agent, slurmd, the watcher) and a job's user (nobody) each ask it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import imds_guard
from slurm_local import SYSTEMD_PATH

NEEDS = ("unshare", "iptables", "ip", "setpriv", "curl")


def _require() -> None:
    missing = [tool for tool in NEEDS if shutil.which(tool) is None]
    reason = f"needs {', '.join(missing)} (apt-get install iptables)" if missing else ""
    if not reason and os.geteuid() != 0:
        reason = "needs root (a network namespace)"
    if reason:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"imds-guard: {reason}")


def test_imds_answers_root_and_refuses_a_job_user(tmp_path: Path) -> None:
    _require()
    guard = tmp_path / "imds-guard"
    guard.write_text(imds_guard("llm-train"))
    guard.chmod(0o755)
    (tmp_path / "www" / "latest").mkdir(parents=True)
    (tmp_path / "www" / "latest" / "index.html").write_text("ok")
    ask = "curl -s -m 5 -o /dev/null -w '%{http_code}' http://169.254.169.254/latest/"
    driver = tmp_path / "driver.sh"
    driver.write_text(
        f"""set -u
ip link set lo up
ip addr add 169.254.169.254/32 dev lo
{sys.executable} -m http.server --bind 169.254.169.254 80 --directory {tmp_path / "www"} >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do {ask} >/dev/null && break; sleep 0.1; done
echo "before-nobody=$(setpriv --reuid=65534 --regid=65534 --clear-groups {ask}; echo " rc=$?")"
/usr/bin/env -i PATH={SYSTEMD_PATH} {guard}; echo "guard=$?"
/usr/bin/env -i PATH={SYSTEMD_PATH} {guard}; echo "guard-again=$?"
echo "root=$({ask})"
echo "nobody=$(setpriv --reuid=65534 --regid=65534 --clear-groups {ask}; echo " rc=$?")"
echo "rules=$(iptables -S OUTPUT | grep -c 169.254.169.254)"
kill $server
"""
    )
    out = subprocess.run(["unshare", "--net", "bash", str(driver)], capture_output=True, text=True, timeout=60)
    lines = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    assert lines["before-nobody"] == "200 rc=0", out.stdout + out.stderr  # open to everyone before the guard
    assert lines["guard"] == "0" and lines["guard-again"] == "0"
    assert lines["root"] == "200"
    assert lines["nobody"] == "000 rc=7", out.stdout  # curl 7: connection refused (REJECT)
    assert lines["rules"] == "1"  # idempotent: one rule after two boots
