"""The catalog is the only source of hardware facts: every accelerator family renders, on Kubernetes, with the
node selector and extended resource the catalog's data files give, and no GPU product label is written in code.

Expected values are read from the data file itself (accelerators.yaml, instances.json), not through the Catalog
methods the components call, and held against the label format NVIDIA's GPU feature discovery documents:
nvidia.com/gpu.product is the NVML product name with spaces replaced by '-' (NVIDIA k8s-device-plugin,
docs/gpu-feature-discovery/README.md, "Generated Labels"), which is a Kubernetes label value (Kubernetes docs,
Labels and Selectors, "Syntax and character set": at most 63 characters, alphanumerics, '-', '_', '.', starting
and ending with an alphanumeric).
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph
from helpers import ROOT, ample_quotas, graph_for
from ruamel.yaml import YAML

DATA = ROOT / "infra" / "gpuinfra" / "catalog" / "data"
LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
NVML_PRODUCT = re.compile(r"^(NVIDIA|Tesla)-\S+$")
"""NVML names of data-center parts begin with "NVIDIA " or (Volta/Turing) "Tesla "; GFD leaves no space."""


@cache
def accelerators_yaml() -> dict[str, Any]:
    return YAML(typ="safe").load((DATA / "accelerators.yaml").read_text(encoding="utf-8"))


@cache
def instance_rows() -> list[dict[str, Any]]:
    return json.loads((DATA / "instances.json").read_text(encoding="utf-8"))["instance_types"]


def expected(row: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """(extended resource, node selector) for an instance row, straight from accelerators.yaml."""
    data = accelerators_yaml()
    device = next(d for d in data["devices"] if d["kind"] == row["accelerator_kind"])
    if device["node_value"] == "instance_type":
        return device["k8s_resource"], {device["node_label"]: row["name"]}
    model = next(
        a
        for a in data["accelerators"]
        if a["name"] == row["accelerator"] and a["memory_mib"] == row["accelerator_memory_mib"]
    )
    return device["k8s_resource"], {device["node_label"]: model["k8s_product"]}


def family_types(largest: bool = False) -> dict[str, dict[str, Any]]:
    """One type per EC2 family with whole accelerators: its smallest by accelerator count, then vCPUs (a serving
    replica), or its largest (a training node)."""
    out: dict[str, dict[str, Any]] = {}
    sign = -1 if largest else 1
    for row in instance_rows():
        if row["accelerator_count"] and not row.get("onprem"):
            best = out.get(row["family"])
            key = (sign * row["accelerator_count"], sign * row["vcpu"])
            if best is None or key < (sign * best["accelerator_count"], sign * best["vcpu"]):
                out[row["family"]] = row
    return out


FAMILIES = sorted(family_types())
SMALL_MODEL = {
    "model.parameters_billion": 1,
    "model.max_concurrent_sequences": 2,
    "model.context_length_tokens": 2048,
    "model.kv_cache": {"layers": 16, "kv_heads": 8, "head_dim": 64},
    "requests": {"input_tokens": 500, "output_tokens": 100, "latency_target_seconds": 30},
}
NEURON_SERVER = {
    "server_kind": "neuron",
    "server_image": "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1",
    "server_args": ["--device", "neuron"],
}
ORG = {
    **ample_quotas("ml-inference", "us-east-1"),
    **ample_quotas("ml-inference", "eu-central-1"),
    **ample_quotas("ml-training", "us-east-1"),
}


def test_every_family_with_accelerators_is_covered() -> None:
    # The catalog carries NVIDIA, Trainium and Inferentia families; a family lost from the list would go untested.
    assert {"g4dn", "g6e", "g7e", "p5", "p6-b300", "inf2", "trn1"} <= set(FAMILIES)
    kinds = {family_types()[f]["accelerator_kind"] for f in FAMILIES}
    assert kinds == {d["kind"] for d in accelerators_yaml()["devices"]}


def test_every_nvidia_product_label_has_gfd_form() -> None:
    for model in accelerators_yaml()["accelerators"]:
        label = model["k8s_product"]
        if model["kind"] == "gpu":
            assert label and LABEL_VALUE.match(label) and NVML_PRODUCT.match(label), model
        else:
            assert label is None, model  # Neuron devices carry no GFD label


def _fleet(family: str) -> Graph:
    row = family_types()[family]
    spec: dict[str, Any] = {"instance.type": row["name"], **SMALL_MODEL}
    if row["accelerator_kind"] != "gpu":
        spec.update(NEURON_SERVER)
    return graph_for("chat-serve-k8s", spec, ORG)


def _training(family: str) -> Graph:
    row = family_types(largest=True)[family]
    spec: dict[str, Any] = {
        "compute.instance_type": row["name"],
        "compute.capacity": {"type": "on_demand"},
        "job.spot": False,
        "model.parameters_billion": 1,
    }
    if not row["efa_interfaces"]:
        spec["interconnect.type"] = "none"
    org = ORG
    offered = load_catalog().offered_regions(row["name"])
    if offered and "us-east-1" not in offered:  # instance-type-not-in-region: train where the type is sold
        region = sorted(offered)[0]
        spec |= {"region": region, "availability_zone": f"{region}a"}
        org = {**ORG, **ample_quotas("ml-training", region)}
    return graph_for("llm-train-eks", spec, org)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_kubernetes_fleet_selects_and_requests_what_the_catalog_says(family: str) -> None:
    resource, selector = expected(family_types()[family])
    deployments = _fleet(family).of_type("kubernetes:apps/v1:Deployment")
    assert len(deployments) == 2  # one per cluster of the example
    for deployment in deployments:
        pod = deployment.inputs["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == selector
        assert all(v for v in pod["nodeSelector"].values())  # the shipped bug: nvidia.com/gpu.product: ""
        (server,) = pod["containers"]
        assert set(server["resources"]["limits"]) == {resource, "memory"}
        assert {t["key"] for t in pod["tolerations"]} == {resource}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_eks_training_cluster_requests_what_the_catalog_says(family: str) -> None:
    resource, _ = expected(family_types(largest=True)[family])
    graph = _training(family)
    (queue,) = [q for q in graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")]
    (group,) = queue.inputs["spec"]["resourceGroups"]
    assert resource in group["coveredResources"]
    (jobset,) = graph.of_type("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet") or [None]
    if jobset is not None:
        text = json.dumps(jobset.inputs)
        assert f'"{resource}"' in text
    # The accelerator nodes are tainted with the catalog's resource, and the queue's flavor tolerates that key.
    taints = {t["key"] for g in graph.of_type("aws:eks/nodeGroup:NodeGroup") for t in g.inputs.get("taints", [])}
    assert taints == {resource}
    (flavor,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert {t["key"] for t in flavor.inputs["spec"]["tolerations"]} == {resource}


# ---- no hardware fact in code -----------------------------------------------------------------------------
CODE_ROOTS = ("infra", "policies", "templates", "tools", "bench")
CATALOG = ROOT / "infra" / "gpuinfra" / "catalog"
CATALOGS = (CATALOG, *sorted((ROOT / "infra" / "gpuinfra" / "clouds").glob("*/catalog")))
"""The shared catalog and each cloud's own (clouds/<cloud>/catalog/): where hardware facts belong."""


def code_files() -> list[Path]:
    suffixes = {".py", ".j2", ".sh", ".yaml", ".json"}
    return [
        path
        for root in CODE_ROOTS
        for path in sorted((ROOT / root).rglob("*"))
        if path.is_file()
        and path.suffix in suffixes
        and "__pycache__" not in path.parts
        and not any(path.is_relative_to(catalog) for catalog in CATALOGS)
    ]


def test_no_gpu_product_label_is_written_in_code() -> None:
    products = {a["k8s_product"] for a in accelerators_yaml()["accelerators"] if a["k8s_product"]}
    assert len(products) >= 10
    found = [
        f"{path.relative_to(ROOT)}: {product}"
        for path in code_files()
        for product in products
        if product in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert not found, found


def test_no_accelerator_name_is_a_string_constant_in_code() -> None:
    """`Literal["L4", ...]`, `{"H100": ...}`, `frozenset({"L40S", ...})`: a copy of catalog data in code."""
    names = {a["name"] for a in accelerators_yaml()["accelerators"]}
    found = []
    for path in code_files():
        if path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not found, found


def test_the_search_finds_a_planted_label(tmp_path: Path) -> None:
    """The two searches above would fail on a copy (the check of the check)."""
    planted = 'GPU_PRODUCT = {"L40S": "NVIDIA-L40S"}\n'
    tree = ast.parse(planted)
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assert "L40S" in constants and any(
        a["k8s_product"] in planted for a in accelerators_yaml()["accelerators"] if a["k8s_product"]
    )


# ---- the shipped bug and the spec's GPU names --------------------------------------------------------------
def test_chat_serve_k8s_on_g7e_selects_rtx_pro_6000_nodes() -> None:
    """Reproduced by the code review (1.2 #1): every Deployment got nvidia.com/gpu.product "". NVIDIA's product
    name is "NVIDIA RTX PRO 6000 Blackwell Server Edition" (AWS's G7e launch post), so GFD's label is this."""
    graph = graph_for("chat-serve-k8s", {"instance.type": "g7e.2xlarge"}, ORG)
    selectors = [
        d.inputs["spec"]["template"]["spec"]["nodeSelector"] for d in graph.of_type("kubernetes:apps/v1:Deployment")
    ]
    assert selectors == [{"nvidia.com/gpu.product": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"}] * 2


def test_instance_gpu_takes_every_catalog_accelerator_name() -> None:
    from helpers import inputs_for

    # RTX-PRO-6000 (g7e) was refused by the schema's hand-kept list although `auto` picks g7e.
    inputs = inputs_for("chat-serve", {"instance.gpu": "RTX-PRO-6000"})
    assert inputs.spec.instance.gpu == "RTX-PRO-6000"  # type: ignore[union-attr]


def test_an_unknown_gpu_name_is_an_input_error_at_its_line(tmp_path: Path) -> None:
    from helpers import gpuinfra, write_stack

    path = write_stack(tmp_path, "chat-serve", {"instance.gpu": "RTX-PRO-600"})
    done = gpuinfra("validate", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    text = done.stdout + done.stderr
    assert "unknown accelerator 'RTX-PRO-600'" in text and "instance.gpu" in text and "RTX-PRO-6000" in text
    line = 1 + path.read_text().splitlines().index("      gpu: RTX-PRO-600")  # the `gpu:` line, as written
    assert f"{path.name}:{line}" in text or f"{path}:{line}" in text
    assert "Traceback" not in text
