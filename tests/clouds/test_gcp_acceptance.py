"""The NCCL acceptance job on GKE's RDMA fabric (llm-train-gcp): the Kubernetes clusters' all-reduce gate with Google's
gIB diagnostic image, the trainer's pod networks and host mounts, and the gIB settings sourced before mpirun. Judged
against the JobSet CRD at the pin, against the trainer's JobSet (queue, requests, networks), and by running its
script as the pod runs it (bash, the pod's env, the Job controller's JOB_COMPLETION_INDEX, stand-ins for mpirun,
ssh, sshd and ssh-keygen: tests/components/test_k8s_nccl_acceptance.py's) and shellcheck.

The floor is computed here: a3-ultragpu-8g's eight CX-7 NICs at 400 Gb/s are 3,200 Gbps (Google Cloud, "GPU
machine types": A3 Ultra), 400 GB/s, of which 60% is 240 GB/s (the Slurm job's rule, docs/training-operations.md).
Google's own 2-node A3 Ultra all_gather reaches 328.85 GB/s bus bandwidth at 8 GiB (Cluster Toolkit
examples/gke-a3-ultragpu dws-flex-start-queued-provisioning README), above it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import jsonschema
import pytest
from components.test_k8s_nccl_acceptance import acceptance, job_of, openssh, run_pod, training
from components.test_training_shellcheck import shellcheck
from gpuinfra.graph import Graph
from helpers import example_graph
from preflight.upstream import crd_schema

STACK = "llm-train-gcp"
ENV_SCRIPT = """# Stands in for gIB's set_nccl_env.sh: the plugin's tuning, exported.
export NCCL_IB_TC=52 NCCL_IB_QPS_PER_CONNECTION=4 NCCL_CROSS_NIC=0
"""


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(STACK)


@pytest.fixture(scope="module")
def gke(graph: Graph) -> tuple[str, dict[str, Any]]:
    jobset, script = acceptance(graph)
    (container,) = job_of(jobset)["template"]["spec"]["containers"]
    return script, container


def _pod(jobset: dict[str, Any]) -> dict[str, Any]:
    return dict(job_of(jobset)["template"])


def test_the_jobset_fits_the_jobset_crd_at_the_pin(graph: Graph) -> None:
    jobset, _ = acceptance(graph)
    group, version = jobset["apiVersion"].split("/")
    validator = jsonschema.Draft7Validator(crd_schema(group, version, jobset["kind"]))
    assert [e.message for e in validator.iter_errors(jobset)] == []


def test_it_runs_where_the_trainer_runs_with_what_it_requests(graph: Graph) -> None:
    jobset, _ = acceptance(graph)
    train = training(graph)
    queue = "kueue.x-k8s.io/queue-name"
    assert jobset["metadata"]["labels"][queue] == train["metadata"]["labels"][queue] == STACK
    job, train_job = job_of(jobset), job_of(train)
    assert job["parallelism"] == job["completions"] == train_job["parallelism"] == 16
    pod, train_pod = _pod(jobset), dict(train_job["template"])
    (container,), (trainer,) = pod["spec"]["containers"], train_pod["spec"]["containers"]
    assert container["resources"] == trainer["resources"]
    assert pod["spec"]["tolerations"] == train_pod["spec"]["tolerations"]
    # The same pod networks (eth0 the pod network, eth1 gvnic-1, eth2..eth9 rdma-0..7) as the trainer.
    for key in ("networking.gke.io/default-interface", "networking.gke.io/interfaces"):
        assert pod["metadata"]["annotations"][key] == train_pod["metadata"]["annotations"][key]
    assert len(json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])) == 10
    # The node's NVIDIA libraries and gIB plugin, read-only, where the trainer has them.
    host = {v["name"]: v["hostPath"]["path"] for v in pod["spec"]["volumes"] if "hostPath" in v}
    assert host == {"nvidia": "/home/kubernetes/bin/nvidia", "gib": "/home/kubernetes/bin/gib"}
    mounts = {m["name"]: (m["mountPath"], m.get("readOnly")) for m in container["volumeMounts"]}
    assert mounts["gib"] == ("/usr/local/gib", True) and mounts["nvidia"] == ("/usr/local/nvidia", True)


def test_it_is_googles_diagnostic_image_with_gib_first_and_mpi_on_the_pod_network(gke: tuple[str, Any]) -> None:
    _, container = gke
    # The diagnostic image of the gIB release the installer DaemonSet puts on the nodes (v1.1.1).
    assert container["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1"
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["NCCL_NET"] == "gIB"
    assert env["LD_LIBRARY_PATH"].split(":")[0] == "/usr/local/gib/lib64"
    assert env["OMPI_MCA_btl_tcp_if_include"] == env["OMPI_MCA_oob_tcp_if_include"] == "eth0"
    assert not any(k.startswith("GPUINFRA_CHECKPOINT") for k in env)


def test_the_leader_sources_gibs_settings_and_passes_them_to_every_rank(
    tmp_path: Path, gke: tuple[str, dict[str, Any]]
) -> None:
    settings = tmp_path / "set_nccl_env.sh"
    settings.write_text(ENV_SCRIPT)
    extra = {"FAKE_BUSBW": "329", "GPUINFRA_NCCL_ENV_SCRIPT": str(settings), "GPUINFRA_MPIRUN": "mpirun"}
    result, fake = run_pod(tmp_path, *gke, 0, extra)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS: bus bandwidth 329 GB/s at 8589934592 B >= 240 GB/s on 16 nodes" in result.stdout
    args = (fake / "mpirun.args").read_text().split("\n")
    assert args[args.index("-np") + 1] == "128" and args[args.index("-N") + 1] == "8"
    exported = {args[i + 1] for i, a in enumerate(args) if a == "-x"}
    # The pod's own (NCCL_NET, LD_LIBRARY_PATH) and what the settings script exported.
    assert {"NCCL_NET", "LD_LIBRARY_PATH", "NCCL_IB_TC", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_CROSS_NIC"} <= exported
    assert args[args.index("-b") - 1] == "/third_party/nccl-tests/build/all_reduce_perf"
    hosts = (fake / "hostfile").read_text().splitlines()
    assert hosts[1:] == [f"llm-nccl-abcde-nccl-0-{i}.llm-nccl-abcde slots=8" for i in range(1, 16)]
    # ssh (and mpirun's ssh to the peers) dials the peers' sshd on Google's port.
    effective = subprocess.run(
        [openssh("ssh"), "-G", "-F", str(tmp_path / "home" / ".ssh" / "config"), "peer"],
        env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert "port 222" in effective


def test_without_gibs_settings_the_leader_stops_before_mpirun(tmp_path: Path, gke: tuple[str, Any]) -> None:
    missing = tmp_path / "nowhere" / "set_nccl_env.sh"
    result, fake = run_pod(tmp_path, *gke, 0, {"FAKE_BUSBW": "329", "GPUINFRA_NCCL_ENV_SCRIPT": str(missing)})
    assert result.returncode == 2 and f"cannot read the fabric's NCCL settings from {missing}" in result.stderr
    assert not (fake / "mpirun.args").exists()


def test_a_slow_fabric_fails_with_the_floor(tmp_path: Path, gke: tuple[str, Any]) -> None:
    settings = tmp_path / "set_nccl_env.sh"
    settings.write_text(ENV_SCRIPT)
    result, _ = run_pod(tmp_path, *gke, 0, {"FAKE_BUSBW": "200", "GPUINFRA_NCCL_ENV_SCRIPT": str(settings)})
    assert result.returncode == 1
    assert "FAIL: bus bandwidth 200 GB/s at 8589934592 B is below the floor of 240 GB/s" in result.stderr


def test_the_other_pods_serve_ssh_on_googles_port(tmp_path: Path, gke: tuple[str, Any]) -> None:
    result, fake = run_pod(tmp_path, *gke, 3, {})
    assert result.returncode == 0, result.stderr
    assert (fake / "sshd.args").read_text().split() == ["-D", "-e", "-p", "222"]


def test_shellcheck_passes_on_the_rendered_script(tmp_path: Path, gke: tuple[str, Any]) -> None:
    path = tmp_path / "nccl-acceptance"
    path.write_text(gke[0])
    result = subprocess.run([shellcheck(), "-s", "bash", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_the_namespace_admits_the_acceptance_pod(graph: Graph) -> None:
    # Host mounts: only the privileged Pod Security level admits the pod (as it does the trainer).
    (namespace,) = graph.of_type("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    (secret,) = graph.of_type("kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == "[secret]"
