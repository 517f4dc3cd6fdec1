"""The NCCL acceptance JobSet of the Kubernetes training stacks (EKS and on premises): judged against the JobSet CRD
at the pin (../shared/upstream), against the training JobSet it must match (queue, requests, toleration), and by
running its script as the pod runs it: bash, the environment the pod spec gives plus what the Job controller adds
(JOB_COMPLETION_INDEX), the image's PATH, stand-ins for mpirun (printing nccl-tests' own table, NVIDIA/nccl-tests
src/util.cu writeResultHeader: size count type redop root, then time algbw busbw #wrong out of place and in place),
ssh, sshd and ssh-keygen. shellcheck covers the rendered script.

Floors are computed here: busbw ceiling = the node's network rate / 8 (GB/s), the floor 60 % of it (the Slurm job's
rule, docs/training-operations.md); p5.48xlarge 3,200 Gbps (EC2 User Guide, network specifications) and DGX H100 8 x
400 Gb/s ConnectX-7 (NVIDIA DGX H100 User Guide) both give 400 GB/s and a 240 GB/s floor."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from components.test_training_shellcheck import shellcheck
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.training.acceptance import key_pair
from helpers import example_graph
from preflight.upstream import crd_schema

STACKS = ("llm-train-eks", "llm-train-onprem")
IMAGE_PATH = "/opt/amazon/openmpi/bin/:/opt/amazon/efa/bin:/usr/bin:/usr/local/bin:/usr/local/sbin:/usr/sbin:/sbin:/bin"
"""The pinned image's PATH (awsome-distributed-training nccl-tests.Dockerfile ENV PATH, on the CUDA base's)."""

FAKE_MPIRUN = r"""#!/bin/bash
# Stands in for mpirun + all_reduce_perf: records its arguments and the hostfile, prints nccl-tests' table.
printf '%s\n' "$@" >"$FAKE_DIR/mpirun.args"
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = --hostfile ]; then j=$((i + 1)); cp "${!j}" "$FAKE_DIR/hostfile"; fi
done
cat <<HEAD
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
HEAD
printf '%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n' \
  8 2 float sum -1 35.1 0.00 0.00 0 34.9 0.00 0.00 0 \
  8589934592 2147483648 float sum -1 40020 214.6 "$FAKE_BUSBW" "${FAKE_WRONG:-0}" 40100 214.2 "$FAKE_BUSBW" 0
echo "# Out of bounds values : ${FAKE_WRONG:-0} OK"
exit "${FAKE_RC:-0}"
"""
FAKE_SSH = r"""#!/bin/bash
# Stands in for ssh: the host is the argument before the command; FAKE_DOWN names a host that never answers.
host="${@: -2:1}"
echo "$host" >>"$FAKE_DIR/ssh.hosts"
[ "$host" != "${FAKE_DOWN:-}" ]
"""
FAKE_SSHD = """#!/bin/bash
printf '%s\\n' "$@" >"$FAKE_DIR/sshd.args"
"""
FAKE_KEYGEN = """#!/bin/bash
echo "$*" >"$FAKE_DIR/ssh-keygen.args"
"""


def acceptance(graph: Graph) -> tuple[dict[str, Any], str]:
    (config,) = [
        c
        for c in graph.of_type("kubernetes:core/v1:ConfigMap")
        if "nccl-acceptance.yaml" in (c.inputs.get("data") or {})
    ]
    data = config.inputs["data"]
    return yaml.safe_load(data["nccl-acceptance.yaml"]), data["nccl-acceptance"]


def training(graph: Graph) -> dict[str, Any]:
    (config,) = [
        c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in (c.inputs.get("data") or {})
    ]
    return dict(yaml.safe_load(config.inputs["data"]["jobset.yaml"]))


def job_of(jobset: dict[str, Any]) -> dict[str, Any]:
    (replicated,) = jobset["spec"]["replicatedJobs"]
    return dict(replicated["template"]["spec"])


@pytest.fixture(scope="module", params=STACKS)
def stack(request: pytest.FixtureRequest) -> tuple[str, Graph]:
    return request.param, example_graph(request.param)


def test_the_jobset_fits_the_jobset_crd_at_the_pin(stack: tuple[str, Graph]) -> None:
    jobset, _ = acceptance(stack[1])
    group, version = jobset["apiVersion"].split("/")
    validator = jsonschema.Draft7Validator(crd_schema(group, version, jobset["kind"]))
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(jobset)]
    assert errors == []
    misspelt = dict(jobset, spec={**jobset["spec"], "network": {"enableDNSHostname": True}})
    assert any("enableDNSHostname" in e.message for e in validator.iter_errors(misspelt))


def test_it_asks_the_training_queue_for_what_the_training_pods_request(stack: tuple[str, Graph]) -> None:
    """Same LocalQueue, one pod per node with the same requests (Kueue admits it into the same quota, so it never
    runs beside a training run), the GPU toleration, pod 0 decides the Job (success policy), no restarts."""
    name, graph = stack
    jobset, _ = acceptance(graph)
    train = training(graph)
    queue = "kueue.x-k8s.io/queue-name"
    assert jobset["metadata"]["labels"][queue] == train["metadata"]["labels"][queue]
    job, train_job = job_of(jobset), job_of(train)
    assert job["parallelism"] == job["completions"] == train_job["parallelism"] == {"llm-train-eks": 16}.get(name, 32)
    assert job["completionMode"] == "Indexed" and job["backoffLimit"] == 0
    assert job["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 0
    pod, train_pod = job["template"]["spec"], train_job["template"]["spec"]
    (container,) = pod["containers"]
    trainer = train_pod["containers"][0]
    assert container["resources"] == trainer["resources"]
    fabric = {"llm-train-eks": "vpc.amazonaws.com/efa", "llm-train-onprem": "rdma/ib"}[name]
    assert container["resources"]["limits"][fabric] == {"llm-train-eks": 32, "llm-train-onprem": 1}[name]
    assert pod["tolerations"] == train_pod["tolerations"]
    assert container["image"].startswith("public.ecr.aws/hpc-cloud/nccl-tests:") and ":latest" not in container["image"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    train_env = {e["name"]: e.get("value") for e in trainer["env"]}
    assert {k: v for k, v in train_env.items() if k.startswith("NCCL_")}.items() <= env.items()
    assert not any(k.startswith("GPUINFRA_CHECKPOINT") for k in env)
    assert (env.get("NCCL_NET") == "IB") == (name == "llm-train-onprem")
    # The pods are not training pods: the training PodDisruptionBudget must not count them.
    assert job["template"]["metadata"]["labels"]["gpuinfra.io/workload"] != "training"


def test_the_ssh_key_is_in_a_secret_the_pods_mount(stack: tuple[str, Graph]) -> None:
    jobset, _ = acceptance(stack[1])
    pod = job_of(jobset)["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    secrets = {s.inputs["metadata"]["name"]: s.inputs for s in stack[1].of_type("kubernetes:core/v1:Secret")}
    # The private key never shows in a preview or the state in clear: a Pulumi secret.
    assert secrets[volume["secret"]["secretName"]]["stringData"] == "[secret]"


def test_the_floor_is_sixty_percent_of_the_nodes_network_rate(stack: tuple[str, Graph]) -> None:
    _, script = acceptance(stack[1])
    assert "\nfloor=240\n" in script and 'floor="${GPUINFRA_NCCL_MIN_BUSBW:-$floor}"' in script  # 3200 / 8 * 0.6


def key_dir(root: Path) -> Path:
    keys = root / "keys"
    keys.mkdir()
    for name, text in key_pair(b"seed").items():
        (keys / name).write_text(text)
    return keys


def run_pod(
    tmp_path: Path, script: str, container: dict[str, Any], index: int, extra: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the script as the kubelet runs the container: bash with the pod's env (JOBSET_NAME resolved from the
    label, as the downward API does), the Job controller's JOB_COMPLETION_INDEX and the image's PATH, with the
    stand-ins first on PATH."""
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    for name, text in (("mpirun", FAKE_MPIRUN), ("ssh", FAKE_SSH), ("sshd", FAKE_SSHD), ("ssh-keygen", FAKE_KEYGEN)):
        (fake / "bin" / name).write_text(text)
        (fake / "bin" / name).chmod(0o755)
    (tmp_path / "script").write_text(script)
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    env |= {
        "JOBSET_NAME": "llm-nccl-abcde",
        "JOB_COMPLETION_INDEX": str(index),
        "HOSTNAME": "llm-nccl-abcde-nccl-0-0",
        "HOME": str(tmp_path / "home"),
        "PATH": f"{fake / 'bin'}:{IMAGE_PATH}",
        "GPUINFRA_SSH_KEYS": str(key_dir(tmp_path)),
        "GPUINFRA_MPIRUN": str(fake / "bin" / "mpirun"),
        "GPUINFRA_SSHD": str(fake / "bin" / "sshd"),
        "GPUINFRA_SSHD_DIR": str(tmp_path / "run-sshd"),
        "FAKE_DIR": str(fake),
        **extra,
    }
    result = subprocess.run(
        ["/bin/bash", str(tmp_path / "script")], env=env, capture_output=True, text=True, timeout=60
    )
    return result, fake


@pytest.fixture(scope="module")
def eks() -> tuple[str, dict[str, Any]]:
    jobset, script = acceptance(example_graph("llm-train-eks"))
    (container,) = job_of(jobset)["template"]["spec"]["containers"]
    return script, container


def test_the_leader_runs_one_rank_per_gpu_over_every_pod_and_passes_a_fabric_at_line_rate(
    tmp_path: Path, eks: tuple[str, dict[str, Any]]
) -> None:
    result, fake = run_pod(tmp_path, *eks, 0, {"FAKE_BUSBW": "362"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS: bus bandwidth 362 GB/s at 8589934592 B >= 240 GB/s on 16 nodes" in result.stdout
    args = (fake / "mpirun.args").read_text().split("\n")
    assert args[args.index("-np") + 1] == "128" and args[args.index("-N") + 1] == "8"  # 16 nodes x 8 GPUs
    exported = {args[i + 1] for i, a in enumerate(args) if a == "-x"}
    assert {"NCCL_SOCKET_IFNAME", "NCCL_DEBUG", "PATH"} <= exported
    assert args[args.index("-b") - 1] == "/opt/nccl-tests/build/all_reduce_perf"
    hosts = (fake / "hostfile").read_text().splitlines()
    assert hosts[0] == f"{os.uname().nodename} slots=8" or hosts[0].endswith(" slots=8")
    assert hosts[1:] == [f"llm-nccl-abcde-nccl-0-{i}.llm-nccl-abcde slots=8" for i in range(1, 16)]
    ssh = tmp_path / "home" / ".ssh"
    assert (ssh / "authorized_keys").read_text() == key_pair(b"seed")["id_ecdsa.pub"]
    assert all((ssh / f).stat().st_mode & 0o777 == 0o600 for f in ("authorized_keys", "id_ecdsa", "config"))
    # ssh (and mpirun's ssh to the peers) reads this file: the key, and no prompt for unknown host keys.
    client = openssh("ssh")
    effective = subprocess.run(
        [client, "-G", "-F", str(ssh / "config"), "llm-nccl-abcde-nccl-0-1.llm-nccl-abcde"],
        env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert "stricthostkeychecking false" in effective
    # ssh expands ~ to the user's passwd home (root's /root in the pod), not $HOME.
    assert any(line.startswith("identityfile ") and line.endswith("/.ssh/id_ecdsa") for line in effective)


def test_a_slow_fabric_fails_with_the_floor_in_the_message(tmp_path: Path, eks: tuple[str, dict[str, Any]]) -> None:
    result, _ = run_pod(tmp_path, *eks, 0, {"FAKE_BUSBW": "180"})
    assert result.returncode == 1
    assert "FAIL: bus bandwidth 180 GB/s at 8589934592 B is below the floor of 240 GB/s" in result.stderr


def test_wrong_results_fail_even_at_full_speed(tmp_path: Path, eks: tuple[str, dict[str, Any]]) -> None:
    result, _ = run_pod(tmp_path, *eks, 0, {"FAKE_BUSBW": "380", "FAKE_WRONG": "2"})
    assert result.returncode == 1 and "1 message sizes reported wrong results" in result.stderr


def test_a_failed_mpirun_or_a_silent_peer_is_exit_2(tmp_path: Path, eks: tuple[str, dict[str, Any]]) -> None:
    result, _ = run_pod(tmp_path / "a", *eks, 0, {"FAKE_BUSBW": "380", "FAKE_RC": "1"})
    assert result.returncode == 2 and "mpirun exited 1" in result.stderr
    down = "llm-nccl-abcde-nccl-0-3.llm-nccl-abcde"
    result, fake = run_pod(tmp_path / "b", *eks, 0, {"FAKE_DOWN": down, "GPUINFRA_PEER_WAIT_SECONDS": "0"})
    assert result.returncode == 2 and f"{down} does not answer ssh" in result.stderr
    assert not (fake / "mpirun.args").exists()


def test_the_other_pods_serve_ssh(tmp_path: Path, eks: tuple[str, dict[str, Any]]) -> None:
    result, fake = run_pod(tmp_path, *eks, 5, {})
    assert result.returncode == 0, result.stderr
    assert (fake / "sshd.args").read_text().split() == ["-D", "-e"]
    assert (fake / "ssh-keygen.args").read_text().strip() == "-A"
    assert not (fake / "mpirun.args").exists()


def test_outside_the_jobset_it_says_so(tmp_path: Path, eks: tuple[str, dict[str, Any]]) -> None:
    script, _ = eks
    (tmp_path / "s").write_text(script)
    result = subprocess.run(
        ["/bin/bash", str(tmp_path / "s")], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True
    )
    assert result.returncode == 2 and "JOB_COMPLETION_INDEX and JOBSET_NAME are unset" in result.stderr


def test_shellcheck_passes_on_the_rendered_script(stack: tuple[str, Graph], tmp_path: Path) -> None:
    _, script = acceptance(stack[1])
    path = tmp_path / "nccl-acceptance"
    path.write_text(script)
    result = subprocess.run([shellcheck(), "-s", "bash", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def openssh(tool: str) -> str:
    """An OpenSSH client tool (Debian's openssh-client): required in CI, skipped elsewhere when absent."""
    found = shutil.which(tool)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} (openssh-client) is missing")
        pytest.skip(f"{tool} not installed")
    return found


def test_the_key_pair_is_one_openssh_reads_and_the_same_for_the_same_seed(tmp_path: Path) -> None:
    keygen = openssh("ssh-keygen")
    pair = key_pair(b"\x01" * 32)
    assert pair == key_pair(b"\x01" * 32) and pair != key_pair(b"\x02" * 32)
    private = tmp_path / "id"
    private.write_text(pair["id_ecdsa"])
    private.chmod(0o600)
    derived = subprocess.run([keygen, "-y", "-f", str(private)], capture_output=True, text=True, check=True)
    assert pair["id_ecdsa.pub"].split()[:2] == derived.stdout.split()[:2]
    assert pair["id_ecdsa.pub"].startswith("ecdsa-sha2-nistp256 ")
