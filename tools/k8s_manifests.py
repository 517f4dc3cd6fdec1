"""Write every Kubernetes object the Kubernetes example stacks create, one YAML file each, plus the JobSet
templates their ConfigMaps carry (and each of their replicated Jobs as a batch/v1 Job, which scanners know), for a
manifest scanner (checkov, kube-linter, kubeconform):

    python tools/k8s_manifests.py OUT_DIR [STACK ...]
    checkov -d OUT_DIR --framework kubernetes --compact --quiet

The objects are what the stack's program registers (the in-process engine's graph, as `gpuinfra preview` builds
it); Helm releases are left out (their charts are the cluster owner's)."""

from __future__ import annotations

import sys
from pathlib import Path

from ruamel.yaml import YAML

STACKS = ["llm-train-eks", "llm-train-onprem", "chat-serve-k8s"]


def manifests(stack: str) -> dict[str, object]:
    """File name -> object, for one example stack."""
    from gpuinfra.load import load_inputs
    from gpuinfra.workspace.program import program_graph

    graph = program_graph(load_inputs(stack))
    out: dict[str, object] = {}
    for resource in graph.resources:
        if not resource.type.startswith("kubernetes:") or resource.type.endswith(":Release"):
            continue
        data = dict(resource.inputs)
        if not {"apiVersion", "kind"} <= set(data):
            continue
        out[f"{stack}--{data['kind']}--{resource.name}.yaml"] = data
        if data["kind"] == "ConfigMap":
            out.update(carried_jobsets(stack, resource.name, data.get("data") or {}))
    return out


def carried_jobsets(stack: str, name: str, data: dict[str, object]) -> dict[str, object]:
    """The JobSets a ConfigMap carries for the team to submit (the training job template, the NCCL acceptance
    job), each with its replicated Jobs as batch/v1 Jobs: scanners know Jobs, not the JobSet CRD."""
    out: dict[str, object] = {}
    for key, text in data.items():
        if not key.endswith(".yaml") or not isinstance(text, str):
            continue
        jobset = YAML(typ="safe", pure=True).load(text)
        if not isinstance(jobset, dict) or jobset.get("kind") != "JobSet":
            continue
        out[f"{stack}--JobSet--{name}.yaml"] = jobset
        for job in jobset["spec"]["replicatedJobs"]:
            meta = {"name": f"{name}-{job['name']}", "namespace": jobset["metadata"]["namespace"]}
            out[f"{stack}--Job--{name}-{job['name']}.yaml"] = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": meta,
                **job["template"],
            }
    return out


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or "")
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    yaml = YAML()
    for stack in argv[1:] or STACKS:
        for name, data in manifests(stack).items():
            with (folder / name.replace("/", "_")).open("w") as stream:
                yaml.dump(data, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
