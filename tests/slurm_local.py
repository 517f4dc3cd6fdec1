"""A real one-node Slurm on localhost (Debian's slurmctld, slurmd and munge), laid out the way AWS PCS lays it out,
so the scripts gpuinfra generates for PCS run under the caller that runs them there.

What PCS gives a node, and what this reproduces:
- Slurm's commands live only under /opt/aws/pcs/scheduler/slurm-<version>/bin; PATH reaches them through
  /etc/profile.d alone (AWS PCS User Guide, "Install SPANK plugins on AWS PCS": the installer keeps Slurm in
  /opt/aws/pcs/scheduler/slurm-<version>; aws-samples/aws-hpc-recipes
  recipes/pcs/hpc_ready_ami/assets/scripts/install-pcs-slurm.sh, configure_paths). Debian installs them in
  /usr/bin, which bash's built-in PATH (used when the environment has none) would find. So slurmd runs in a
  private mount namespace where /usr/bin is an overlay with the Slurm client commands removed, and the PCS
  directory holds copies of them: a script finds `scontrol` by the PCS path or not at all.
- slurmd hands HealthCheckProgram an environment of SLURMD_NODENAME only (bash adds PWD and SHLVL):
  SchedMD/slurm src/slurmd/slurmd/slurmd.c (run_script_health_check: env_array_create() + SLURMD_NODENAME).
- slurm.conf at the commands' compiled-in default (/etc/slurm/slurm.conf, bind-mounted in the namespace), so a
  script needs no SLURM_CONF, as on PCS (configless, /run/slurm/conf).

The harness needs root (namespaces, slurmd). Outside CI it skips when any of that is missing; with CI set it
fails, so the tests of the generated Slurm scripts cannot silently stop running.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SLURM_CLIENTS = ("scontrol", "squeue", "scancel", "sinfo", "sbatch", "srun")
NODE = "pcsnode1"
PARTITION = "train"
SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""systemd's default PATH for services (systemd.exec(5), "Environment variables in spawned processes")."""
REQUIRED = ("munged", "slurmctld", "slurmd", "unshare", "mount")


def run_as_a_service(setup: str, command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`command` as systemd starts a service (an empty environment but systemd's default PATH), after `setup`
    (shell, run as root) has arranged the node in a private mount namespace, so stand-in tools and files mounted
    over the real ones vanish with the process."""
    return subprocess.run(
        [
            *("unshare", "--mount", "/bin/sh", "-c", f'mount --make-rprivate / && {setup} && exec "$@"', "sh"),
            *("/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", *command),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


FARM_USERS = Path(tempfile.gettempdir()) / "gpuinfra-slurm-farm"
"""One marker per live cluster using the PCS-path copies, and the directories the first one created: pytest-xdist
runs test files in parallel processes, and a cluster must not remove the copies another cluster still runs."""


@contextmanager
def _farm_lock() -> Iterator[None]:
    FARM_USERS.mkdir(exist_ok=True)
    with (FARM_USERS / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _alive(marker: Path) -> bool:
    try:
        os.kill(int(marker.name.split("-")[1]), 0)
    except (ProcessLookupError, ValueError, IndexError):
        return False
    except PermissionError:
        return True
    return True


def pcs_bin(version: str) -> Path:
    return Path(f"/opt/aws/pcs/scheduler/slurm-{version}/bin")


def require_slurm() -> None:
    """Skip (or fail under CI) when this machine cannot run the one-node cluster."""
    missing = [tool for tool in (*REQUIRED, *SLURM_CLIENTS) if shutil.which(tool) is None]
    reason = ""
    if missing:
        reason = f"needs {', '.join(missing)} (apt-get install slurmd slurmctld munge; .ci/apt-packages.txt)"
    elif os.geteuid() != 0:
        reason = "needs root (slurmd and a private mount namespace)"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"one-node Slurm: {reason}")
        pytest.skip(f"one-node Slurm: {reason}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _namespace_script(root: Path, bin_dir: Path) -> str:
    """The shell that builds slurmd's view of the machine, then execs the command it is given."""
    removed = " ".join(f"/usr/bin/{c}" for c in SLURM_CLIENTS)
    return f"""#!/bin/bash
set -euo pipefail
mount --make-rprivate /
mkdir -p {root}/ov/upper {root}/ov/work
mount -t overlay overlay -o lowerdir=/usr/bin,upperdir={root}/ov/upper,workdir={root}/ov/work /usr/bin
rm -f {removed}
mkdir -p /etc/slurm
mount --bind {root}/etc /etc/slurm
test -x {bin_dir}/scontrol
exec "$@"
"""


def _fields(line: str) -> dict[str, str]:
    """`scontrol -o show ...` output (Key=value, values may hold spaces) as a dict."""
    fields: dict[str, str] = {}
    key = ""
    for token in line.split():
        name, eq, value = token.partition("=")
        if eq and name.isalnum():
            key = name
            fields[key] = value
        elif key:
            fields[key] += " " + token
    return fields


class SlurmCluster:
    """One slurmctld, one slurmd (node `pcsnode1`, partition `train`) and their munged, all under `root`."""

    def __init__(self, root: Path, version: str, slurm_conf_extra: str = "", node_options: str = "") -> None:
        self.root = root
        self.node_options = node_options
        """More of the node's slurm.conf settings (RealMemory=4096: jobs that request memory)."""
        self.version = version
        self.bin = pcs_bin(version)
        self.conf = root / "etc" / "slurm.conf"
        self.extra = slurm_conf_extra
        self.procs: list[subprocess.Popen[bytes]] = []
        self.marker: Path | None = None
        self.spool = Path(tempfile.mkdtemp(prefix="slurmd-", dir="/tmp"))
        """slurmd's spool, where each job step's Unix socket goes (`<spool>/<node>_<job>.<step>`): kept short, since a
        socket path holds at most 108 bytes and a step id is ten digits; under pytest's numbered temp folders
        (`/tmp/pytest-of-root/pytest-1124/popen-gw2/<test>/slurm/spool/pcsnode1_13.4294967291`, 109 bytes) every
        launch failed and the job was held for good."""

    # ---- setup ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        for d in ("etc", "state", "log", "munge"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "munge", 0o700)
        self._pcs_farm()
        self._munge()
        self._write_conf()
        ns = self.root / "ns.sh"
        ns.write_text(_namespace_script(self.root, self.bin))
        ns.chmod(0o755)
        self._spawn(["slurmctld", "-D", "-f", str(self.conf)])
        self.wait_for(lambda: self.run("scontrol", "ping", check=False).returncode == 0, "slurmctld up")
        self._spawn(["unshare", "--mount", str(ns), "slurmd", "-D", "-N", NODE, "-f", "/etc/slurm/slurm.conf"])

    def _pcs_farm(self) -> None:
        """Copies, not symlinks: inside slurmd's namespace the /usr/bin originals are gone."""
        with _farm_lock():
            self.marker = FARM_USERS / f"user-{os.getpid()}-{id(self)}"
            self.marker.touch()
            if not self.bin.exists():
                top = next(p for p in [*reversed(self.bin.parents), self.bin] if not p.exists())
                self.bin.mkdir(parents=True)
                (FARM_USERS / f"top-{abs(hash(str(top)))}").write_text(str(top))
            for tool in SLURM_CLIENTS:
                target = self.bin / tool
                if not target.exists():
                    shutil.copy2(str(shutil.which(tool)), target)

    def _release_farm(self) -> None:
        """Remove the PCS-path copies once no live cluster uses them."""
        with _farm_lock():
            if self.marker is not None:
                self.marker.unlink(missing_ok=True)
            for stale in [m for m in FARM_USERS.glob("user-*") if not _alive(m)]:
                stale.unlink()
            if any(FARM_USERS.glob("user-*")):
                return
            for record in FARM_USERS.glob("top-*"):
                shutil.rmtree(record.read_text(), ignore_errors=True)
                record.unlink()

    def _munge(self) -> None:
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = self.root / "munge" / "munge.sock"
        self._spawn(
            [
                "munged",
                "-F",
                "--force",
                f"--socket={self.socket}",
                f"--key-file={key}",
                f"--pid-file={self.root / 'munge' / 'munged.pid'}",
                f"--log-file={self.root / 'log' / 'munged.log'}",
                f"--seed-file={self.root / 'munge' / 'seed'}",
            ]
        )
        self.wait_for(self.socket.exists, "munged socket")

    def _write_conf(self) -> None:
        r = self.root
        self.conf.write_text(
            f"""ClusterName=gpuinfra-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
StateSaveLocation={r / "state"}
SlurmdSpoolDir={self.spool}
SlurmctldPidFile={r / "slurmctld.pid"}
SlurmdPidFile={r / "slurmd.pid"}
SlurmctldLogFile={r / "log" / "slurmctld.log"}
SlurmdLogFile={r / "log" / "slurmd.log"}
SlurmdDebug=debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=10
SlurmdTimeout=10
InactiveLimit=0
KillWait=5
NodeName={NODE} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs=1 {self.node_options} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
{self.extra}
"""
        )

    def _spawn(self, argv: list[str]) -> None:
        log = (self.root / "log" / f"{Path(argv[0]).name}-{len(self.procs)}.out").open("wb")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    # ---- use -----------------------------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """A Slurm client command from the test's side (Debian's /usr/bin, this cluster's slurm.conf)."""
        return subprocess.run(argv, env=self.env(), capture_output=True, text=True, check=check, timeout=timeout)

    def in_namespace(
        self, argv: list[str], env: dict[str, str], timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv` with exactly `env`, seeing the node as slurmd does (no /usr/bin Slurm, conf at /etc/slurm)."""
        return subprocess.run(
            [
                "unshare",
                "--mount",
                str(self.root / "ns.sh"),
                "/usr/bin/env",
                "-i",
                *[f"{k}={v}" for k, v in env.items()],
                *argv,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def spawn_in_namespace(self, argv: list[str], env: dict[str, str], log: str) -> subprocess.Popen[bytes]:
        """Start `argv` (a daemon) with exactly `env` in slurmd's view of the node; stopped with the cluster."""
        out = (self.root / "log" / log).open("wb")
        proc = subprocess.Popen(
            [
                "unshare",
                "--mount",
                str(self.root / "ns.sh"),
                "/usr/bin/env",
                "-i",
                *[f"{k}={v}" for k, v in env.items()],
                *argv,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.insert(0, proc)
        return proc

    def job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` as a dict (JobState, Restarts, Reason, ...)."""
        return _fields(self.run("scontrol", "-o", "show", "job", job_id).stdout)

    def node(self) -> dict[str, str]:
        """`scontrol show node` as a dict (State, Reason, ...)."""
        return _fields(self.run("scontrol", "-o", "show", "node", NODE).stdout)

    def wait_for(self, ready: object, what: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if callable(ready) and ready():
                return
            time.sleep(0.2)
        raise AssertionError(
            f"one-node Slurm: timed out waiting for {what}; logs in {self.root / 'log'}:\n{self.logs()}"
        )

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted((self.root / "log").glob("*"))
        )

    # ---- teardown ------------------------------------------------------------------------------------------
    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        if self.marker is not None:
            self._release_farm()
        shutil.rmtree(self.spool, ignore_errors=True)


@contextmanager
def slurm_cluster(
    root: Path, version: str, slurm_conf_extra: str = "", node_options: str = ""
) -> Iterator[SlurmCluster]:
    require_slurm()
    cluster = SlurmCluster(root, version, slurm_conf_extra, node_options)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


__all__ = ["NODE", "PARTITION", "SYSTEMD_PATH", "SlurmCluster", "pcs_bin", "require_slurm", "slurm_cluster"]
