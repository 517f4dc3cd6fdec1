"""The Lustre client install at boot, run as cloud-init runs bootcmd (root, systemd's PATH) on the OS each PCS
sample AMI is (os-release of Amazon Linux 2 and 2023), in a private mount namespace: /etc/os-release swapped for the
AMI's, the package tools replaced by recorders in /usr/local/bin. For an EFA-enabled file system, curl is a stand-in
that hands over a zip shaped like the FSx guide's configure-efa-fsx-lustre-client package, whose setup.sh records how
it was run, or the real curl fetches that zip from a local HTTP server; the EFA devices are a directory of the
test's. The package is pinned by its SHA-256, taken here with hashlib from the zip the test wrote."""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from gpuinfra.catalog.downloads import FSX_EFA_CLIENT, pinned_download
from gpuinfra.pulumi.components.training.bootstrap import (
    EFA_CLIENT_UNIT,
    Download,
    LustreMount,
    NodeRole,
    lustre_client,
    node_cloud_config,
)
from helpers import cloud_config
from slurm_local import run_as_a_service

BASH = ["/bin/bash"]
EFA_CLIENT_PACKAGE = pinned_download(FSX_EFA_CLIENT).url
OS_RELEASE = {
    "al2": 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n',
    "al2023": 'NAME="Amazon Linux"\nVERSION="2023"\nID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n',
    "ubuntu": 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n',
}


SETUP_SH = """#!/bin/bash
echo "setup.sh $* in $(basename "$PWD") as $(id -u)" >> {calls}
"""
CURL = """#!/bin/bash
out=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out=$2; shift 2 ;; http*) url=$1; shift ;; *) shift ;; esac
done
echo "curl $url" >> {calls}
cp {package} "$out"
"""


def _package(tmp_path: Path, calls: Path) -> Path:
    """A zip shaped like the guide's package, whose setup.sh records how it was run."""
    package = tmp_path / "package.zip"
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("configure-efa-fsx-lustre-client/setup.sh", SETUP_SH.format(calls=calls))
        z.writestr("configure-efa-fsx-lustre-client/README.md", "stand-in\n")
    return package


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _efa_stand_ins(tmp_path: Path, tools: Path, calls: Path, devices: int, real_curl: bool) -> Path:
    """curl handing over a package like the guide's (unless the real one fetches it); `devices` EFA devices in a
    sysfs-like directory."""
    package = _package(tmp_path, calls)
    if not real_curl:
        (tools / "curl").write_text(CURL.format(calls=calls, package=package))
        (tools / "curl").chmod(0o755)
    sysfs = tmp_path / "infiniband"
    sysfs.mkdir()
    for i in range(devices):
        (sysfs / f"rdmap{i}s0").mkdir()
    return sysfs


def _boot(
    tmp_path: Path,
    os_name: str,
    installed: bool = False,
    efa: bool = False,
    devices: int = 0,
    efa_unit: bool = False,
    command: list[str] | None = None,
    url: str = EFA_CLIENT_PACKAGE,
    digest: str | None = None,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Boot in a private mount namespace; with `efa`, the package is pinned at `url` with `digest` (default: the
    stand-in zip's own SHA-256). A `url` other than the guide's is fetched by the real curl."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare (a private mount namespace)")
    (tmp_path / "os-release").write_text(OS_RELEASE[os_name])
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "calls"
    for tool in ("amazon-linux-extras", "dnf"):
        (tools / tool).write_text(f'#!/bin/bash\necho "{tool} $*" >> {calls}\n')
        (tools / tool).chmod(0o755)
    upper = tmp_path / "sbin-upper"
    upper.mkdir()
    if installed:
        (upper / "mount.lustre").write_text("#!/bin/sh\n")
        (upper / "mount.lustre").chmod(0o755)
    real_curl = url != EFA_CLIENT_PACKAGE
    sysfs = _efa_stand_ins(tmp_path, tools, calls, devices, real_curl) if efa else tmp_path / "none"
    pinned = Download(url, digest or _sha256(tmp_path / "package.zip")) if efa else None
    units = tmp_path / "units-upper"
    units.mkdir()
    if efa_unit:
        (units / Path(EFA_CLIENT_UNIT).name).write_text("[Unit]\n")
    script = tmp_path / "lustre-client"
    script.write_text(lustre_client("llm-train", "/fsx", efa, pinned, str(sysfs)))
    command = command or [*BASH, str(script)]
    setup = (
        f"mount --bind {tmp_path / 'os-release'} /etc/os-release && "
        f"mount -t tmpfs t /usr/local/bin && cp {tools}/* /usr/local/bin/ && "
        f"mkdir -p {tmp_path}/w {tmp_path}/wu && "
        f"mount -t overlay o -o lowerdir=/usr/sbin,upperdir={upper},workdir={tmp_path}/w /usr/sbin && "
        f"mount -t overlay o -o lowerdir=/etc/systemd/system,upperdir={units},workdir={tmp_path}/wu /etc/systemd/system"
    )
    result = run_as_a_service(setup, command, timeout=30)
    return result, calls.read_text() if calls.exists() else ""


@pytest.mark.parametrize(
    ("os_name", "expected"),
    [("al2", "amazon-linux-extras install -y lustre\n"), ("al2023", "dnf install -y lustre-client\n")],
)
def test_the_client_is_installed_on_the_pcs_sample_ami_oses(tmp_path: Path, os_name: str, expected: str) -> None:
    result, calls = _boot(tmp_path, os_name)
    assert result.returncode == 0, result.stderr
    assert calls == expected


def test_an_installed_client_is_left_alone(tmp_path: Path) -> None:
    result, calls = _boot(tmp_path, "al2", installed=True)
    assert result.returncode == 0 and calls == ""


def test_an_os_without_a_recipe_fails_loudly(tmp_path: Path) -> None:
    result, calls = _boot(tmp_path, "ubuntu")
    assert result.returncode == 2 and "no install recipe for ubuntu 22.04" in result.stderr and calls == ""


def test_an_efa_file_system_sets_the_node_up_with_the_guides_package(tmp_path: Path) -> None:
    """AL2023 with EFA devices: the client is installed, then the guide's package is fetched and its setup.sh run
    from its own folder, as root."""
    result, calls = _boot(tmp_path, "al2023", efa=True, devices=32)
    assert result.returncode == 0, result.stderr
    assert calls.splitlines() == [
        "dnf install -y lustre-client",
        f"curl {EFA_CLIENT_PACKAGE}",
        "setup.sh  in configure-efa-fsx-lustre-client as 0",
    ]
    assert "EFA client set up (32 EFA devices)" in result.stdout


def test_the_efa_setup_runs_once(tmp_path: Path) -> None:
    """setup.sh installed its unit on an earlier boot, which configures LNet at every boot: nothing fetched again."""
    result, calls = _boot(tmp_path, "al2023", installed=True, efa=True, devices=32, efa_unit=True)
    assert result.returncode == 0, result.stderr
    assert calls == ""


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server over a directory of the test's: (its base URL, the directory)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def test_a_package_with_its_pinned_digest_is_fetched_and_run(tmp_path: Path, file_server: tuple[str, Path]) -> None:
    """The real curl fetches the zip from a file server; its SHA-256 is the pinned one, so setup.sh runs."""
    base, root = file_server
    calls = tmp_path / "calls"
    shutil.copy(_package(tmp_path, calls), root / "c.zip")
    result, recorded = _boot(tmp_path, "al2023", installed=True, efa=True, devices=32, url=f"{base}/c.zip")
    assert result.returncode == 0, result.stderr
    assert recorded == "setup.sh  in configure-efa-fsx-lustre-client as 0\n"
    assert "EFA client set up (32 EFA devices)" in result.stdout


def test_a_package_whose_digest_differs_is_not_run(tmp_path: Path, file_server: tuple[str, Path]) -> None:
    """The served zip is not the pinned one (the docs site changed it, or someone in the path did): nothing of it is
    unpacked or run, the script says why and exits 3, and the node is left to mount over TCP."""
    base, root = file_server
    calls = tmp_path / "calls"
    served = _package(tmp_path, calls)
    shutil.copy(served, root / "c.zip")
    pinned = hashlib.sha256(b"the copy that was checked").hexdigest()
    result, recorded = _boot(
        tmp_path, "al2023", installed=True, efa=True, devices=32, url=f"{base}/c.zip", digest=pinned
    )
    assert result.returncode == 3
    assert recorded == ""
    assert f"refused {base}/c.zip: its SHA-256 is {_sha256(served)}, pinned {pinned}: not run" in result.stderr
    assert "/fsx is mounted over TCP" in result.stderr


def test_the_catalog_pins_the_guides_package() -> None:
    """Without a pin of the stack's own, an EFA node's script fetches the guide's URL and checks the catalog's digest
    (the one recorded on 2026-08-20, catalog/data/downloads.yaml)."""
    script = lustre_client("llm-train", "/fsx", efa=True)
    assert EFA_CLIENT_PACKAGE in script
    assert "ed421b0cd251f4dae78cc727f857937de345d7c67700cc240db5f6af7ba6ef49" in script


@pytest.mark.parametrize(
    ("os_name", "devices", "why"), [("al2", 32, "not an FSx EFA client OS"), ("al2023", 0, "no EFA device")]
)
def test_a_node_that_cannot_be_an_efa_client_mounts_over_tcp(
    tmp_path: Path, os_name: str, devices: int, why: str
) -> None:
    """Amazon Linux 2 (not an EFA client OS) or no EFA device: said on stderr, no download, the boot goes on."""
    result, calls = _boot(tmp_path, os_name, installed=True, efa=True, devices=devices)
    assert result.returncode == 0, result.stderr
    assert why in result.stderr and "/fsx is mounted over TCP" in result.stderr
    assert "curl" not in calls


def test_without_efa_nothing_is_fetched(tmp_path: Path) -> None:
    result, calls = _boot(tmp_path, "al2023")
    assert result.returncode == 0 and calls == "dnf install -y lustre-client\n"
    assert "configure-efa" not in lustre_client("llm-train", "/fsx")


def test_the_bootcmd_entry_runs_the_script(tmp_path: Path) -> None:
    """The user data's bootcmd entry (the script gz+b64, decoded into an argument) as cloud-init runs it: the same
    install, then the EFA setup, which finds no EFA device on this machine and leaves the node on TCP."""
    if any(Path("/sys/class/infiniband").glob("*")):
        pytest.skip("this machine has RDMA devices: the EFA setup would go further than this test stands in for")
    lustre = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx", efa=True)
    config = cloud_config(
        node_cloud_config("llm-train", NodeRole("compute", "p5.48xlarge", gpus=8, efa=32), {}, lustre, "25.05")
    )
    (entry,) = config["bootcmd"]
    result, calls = _boot(tmp_path, "al2023", command=entry)
    assert result.returncode == 0, result.stderr
    assert calls == "dnf install -y lustre-client\n"
    assert "no EFA device in /sys/class/infiniband: /fsx is mounted over TCP" in result.stderr
