"""A corpus of hand-made bad inputs, one or more per class of issue 17 (numbers the planner cannot compute
with, lax types, names and tags AWS or Kubernetes refuse, zones, min > max, CIDRs, node-name patterns, YAML
that is hostile or malformed, organization-file problems). Each is written into a temporary directory and
must give exit 2 with the file, the line, the field path and a hint: never a traceback."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helpers import DELETE

LONG = "x" * 100_000
INF = float("inf")
NAN = float("nan")


@dataclass(frozen=True)
class Bad:
    """One bad input: an example stack with `spec` mutations (or raw `text`), the org with `org` mutations."""

    id: str
    stack: str = "llm-train"
    spec: dict[str, Any] = field(default_factory=dict)
    org: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    """Raw stack file text, instead of the mutated example."""
    path: str | None = None
    """The field path the message must name (dotted, as rendered); None: the file itself."""
    in_org: bool = False
    """The problem is in the organization file: the message must name org.yaml, not the stack file."""


def _nested(depth: int) -> str:
    return "config:\n  gpuinfra:training: " + "[" * depth + "]" * depth + "\n"


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(7)
)

SPEC = "config.gpuinfra:training."
INF_SPEC = "config.gpuinfra:inference."

PATTERN = SPEC + "onprem.node_name_pattern"
NODE_NAME_PATTERNS = {
    "other-brace": "dgx-{index}-{rack}",  # str.format: KeyError
    "unclosed-brace": "dgx-{index:03d}-{",  # ValueError
    "positional": "dgx-{}-{index}",  # IndexError
    "uppercase": "DGX-{index}",  # names Kubernetes refuses
    "huge-width": "dgx-{index:0999999999d}",  # a gigabyte per name
    "space-padded": "dgx-{index:3d}",  # "dgx-  0"
}

CORPUS: list[Bad] = [
    # -- numbers: non-finite, huge and tiny floats in every kind of field ------------------------------
    Bad("inf-parameters", spec={"model.parameters_billion": INF}, path=SPEC + "model.parameters_billion"),
    Bad("nan-interval", spec={"checkpointing.interval_minutes": NAN}, path=SPEC + "checkpointing.interval_minutes"),
    Bad("huge-mtbf", spec={"failure.node_mtbf_hours": 1e308}, path=SPEC + "failure.node_mtbf_hours"),
    Bad("denormal-ckpt-size", spec={"checkpointing.size_gib": 5e-324}, path=SPEC + "checkpointing.size_gib"),
    Bad(
        "tiny-bandwidth",
        spec={"checkpointing.write_bandwidth_gb_s": 1e-300},
        path=SPEC + "checkpointing.write_bandwidth_gb_s",
    ),
    Bad(
        "inf-throughput",
        "chat-serve",
        {"throughput_rps_per_replica": INF},
        path=INF_SPEC + "throughput_rps_per_replica",
    ),
    Bad("huge-peak", "chat-serve", {"regions[0].peak_rps": 1e300}, path=INF_SPEC + "regions[0].peak_rps"),
    Bad(
        "tiny-download", "chat-serve", {"cold_start.download_gb_s": 5e-324}, path=INF_SPEC + "cold_start.download_gb_s"
    ),
    Bad(
        "inf-ramp",
        "chat-serve",
        {"cold_start.demand_ramp_minutes": INF},
        path=INF_SPEC + "cold_start.demand_ramp_minutes",
    ),
    Bad(
        "huge-cold-start",
        "chat-serve",
        {"cold_start.weights_load_seconds": 1e200},
        path=INF_SPEC + "cold_start.weights_load_seconds",
    ),
    Bad(
        "tiny-queue-depth",
        "chat-serve",
        {"autoscaling.target_queue_depth_per_replica": 1e-300},
        path=INF_SPEC + "autoscaling.target_queue_depth_per_replica",
    ),
    Bad(
        "huge-site-bandwidth",
        "llm-train-onprem",
        {"site_lustre.write_bandwidth_gb_s": 1e300},
        path=SPEC + "site_lustre.write_bandwidth_gb_s",
    ),
    Bad(
        "huge-site-capacity",
        "llm-train-onprem",
        {"site_lustre.capacity_tib": 1e300},
        path=SPEC + "site_lustre.capacity_tib",
    ),
    Bad(
        "efa-on-scratch-lustre",
        spec={"lustre.efa": True, "lustre.deployment_type": "SCRATCH_2", "lustre.throughput_mb_s_per_tib": DELETE},
        path=SPEC + "lustre",
    ),
    # -- strict integers and booleans; integers past 64 bits -------------------------------------------
    Bad("bool-node-count", spec={"compute.node_count": True}, path=SPEC + "compute.node_count"),
    Bad("string-node-count", spec={"compute.node_count": "16"}, path=SPEC + "compute.node_count"),
    Bad("float-replicas", "chat-serve", {"regions[0].max_replicas": 1.5}, path=INF_SPEC + "regions[0].max_replicas"),
    Bad("string-bool", "chat-serve", {"autoscaling.predictive": "yes"}, path=INF_SPEC + "autoscaling.predictive"),
    Bad(
        "false-quota",
        org={"accounts.ml-training.quotas.us-east-1.L-417A185B": False},
        in_org=True,
        path="accounts.ml-training.quotas.us-east-1.L-417A185B",
    ),
    Bad(
        "huge-quota",
        org={"accounts.ml-training.quotas.us-east-1.L-417A185B": 2**70},
        in_org=True,
        path="accounts.ml-training.quotas.us-east-1.L-417A185B",
    ),
    Bad(
        "huge-allotment",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.gpu_allotment": 2**64},
        in_org=True,
        path="onprem_sites.dc-east.gpu_allotment",
    ),
    Bad("huge-warm-pool", "chat-serve", {"cold_start.warm_pool": 2**80}, path=INF_SPEC + "cold_start.warm_pool"),
    # -- issue 32: lax types at the edges ----------------------------------------------------------------
    Bad("bool-zero-stage", spec={"model.parallelism.zero_stage": False}, path=SPEC + "model.parallelism.zero_stage"),
    Bad(
        "arabic-indic-account-id",  # pydantic-core's Rust regex reads \d as any Unicode digit
        org={"accounts.ml-training.id": "\u0661" * 12},
        in_org=True,
        path="accounts.ml-training.id",
    ),
    Bad(
        "fullwidth-digits-in-role-arn",
        org={"accounts.ml-training.role_arn": "arn:aws:iam::" + "\uff11" * 12 + ":role/gpuinfra-deploy"},
        in_org=True,
        path="accounts.ml-training.role_arn",
    ),
    Bad(
        "budget-as-text",
        org={"accounts.ml-training.monthly_budget_usd": "42"},
        in_org=True,
        path="accounts.ml-training.monthly_budget_usd",
    ),
    Bad(
        "budget-as-exponent-text",
        org={"accounts.ml-training.monthly_budget_usd": "1e3"},
        in_org=True,
        path="accounts.ml-training.monthly_budget_usd",
    ),
    Bad(
        "budget-as-bool",
        org={"accounts.ml-training.monthly_budget_usd": True},
        in_org=True,
        path="accounts.ml-training.monthly_budget_usd",
    ),
    Bad(
        "huge-racks-per-loop",
        "llm-train-onprem",
        {"onprem.racks_per_cooling_loop": 2**70},
        path=SPEC + "onprem.racks_per_cooling_loop",
    ),
    # -- names, namespaces, tags ------------------------------------------------------------------------
    Bad("long-namespace", "llm-train-eks", {"scheduler.namespace": "n" * 64}, path=SPEC + "scheduler.namespace"),
    Bad(
        "long-k8s-namespace",
        "chat-serve-k8s",
        {"kubernetes.namespace": "n" * 64},
        path=INF_SPEC + "kubernetes.namespace",
    ),
    Bad("upper-name", spec={"name": "LLM-Train"}, path=SPEC + "name"),
    Bad(
        "upper-node-names",
        "llm-train-onprem",
        {"onprem.node_name_pattern": None, "onprem.node_names": [f"DGX-{i}" for i in range(32)]},
        path=SPEC + "onprem.node_names[0]",
    ),
    Bad(
        "long-node-name",
        "llm-train-onprem",
        {"onprem.node_name_pattern": None, "onprem.node_names": ["n" * 254] + [f"dgx-{i}" for i in range(31)]},
        path=SPEC + "onprem.node_names[0]",
    ),
    *(
        Bad(
            f"pattern-{kind}",
            "llm-train-onprem",
            {"onprem.inventory": DELETE, "onprem.node_name_pattern": pattern},  # the example lists an inventory
            path=PATTERN,
        )
        for kind, pattern in NODE_NAME_PATTERNS.items()
    ),
    Bad("reserved-tag-key", spec={"tags": {"aws:owner": "me"}}, path=SPEC + "tags"),
    Bad("long-tag-value", spec={"tags": {"team": "v" * 300}}, path=SPEC + "tags.team"),
    Bad("long-tag-key", spec={"tags": {"k" * 129: "v"}}, path=SPEC + "tags"),
    Bad("org-reserved-tag", org={"default_tags": {"aws:cost": "x"}}, in_org=True, path="default_tags"),
    # -- zones, regions, CIDRs, min <= max --------------------------------------------------------------
    Bad("zone-not-in-region", spec={"availability_zone": "us-west-2a"}, path=SPEC + "availability_zone"),
    Bad("zone-no-such-letter", spec={"availability_zone": "us-east-1z"}, path=SPEC + "availability_zone"),
    Bad(
        "fleet-zone-other-region",
        "chat-serve",
        {"regions[0].availability_zones": ["eu-west-1a", "eu-west-1b"]},
        path=INF_SPEC + "regions[0].availability_zones",
    ),
    Bad(
        "cidr-not-a-network",
        "chat-serve",
        {"regions[0].vpc_cidr": "10.999.0.0/16"},
        path=INF_SPEC + "regions[0].vpc_cidr",
    ),
    Bad(
        "schedule-min-over-max",
        "chat-serve",
        {"autoscaling.schedules": [{"name": "peak", "recurrence": "0 8 * * *", "min_replicas": 5, "max_replicas": 2}]},
        path=INF_SPEC + "autoscaling.schedules[0].min_replicas",
    ),
    Bad(
        "region-min-over-max",
        "chat-serve",
        {"regions[0].min_replicas": 20, "regions[0].max_replicas": 10},
        path=INF_SPEC + "regions[0].min_replicas",
    ),
    # -- organization file -----------------------------------------------------------------------------
    Bad("registry-account-missing", "chat-serve", org={"registry.account": "nobody"}, in_org=True, path="registry"),
    Bad(
        "org-account-id-type",
        org={"accounts.ml-training.id": 111111111111},
        in_org=True,
        path="accounts.ml-training.id",
    ),
    Bad("org-long-value", org={"name": LONG}, in_org=True, path="name"),
    # -- values echoed: cut to a readable length --------------------------------------------------------
    Bad("long-value", spec={"model.name": LONG}, path=SPEC + "model.name"),
    Bad("long-instance-type", spec={"compute.instance_type": LONG}, path=SPEC + "compute.instance_type"),
    # -- YAML ------------------------------------------------------------------------------------------
    Bad("alias-bomb", text=ALIAS_BOMB),
    Bad("deep-nesting", text=_nested(5000)),
    Bad("tagged-scalar", text="config:\n  gpuinfra:training:\n    name: !custom llm\n"),
    Bad("yaml-set", text="config:\n  gpuinfra:training: !!set {a, b}\n"),
    Bad("complex-key", text="config:\n  ? [a, b]\n  : 1\n"),
    Bad("syntax-error", text="config:\n  gpuinfra:training:\n    name: [unclosed\n"),
    Bad("tab-indent", text="config:\n\tgpuinfra:training: {}\n"),
    Bad("top-level-list", text="- a\n- b\n"),
    Bad("spec-a-string", text="config:\n  gpuinfra:training: hello\n", path=SPEC.rstrip(".")),
    Bad("duplicate-key", text="config:\n  gpuinfra:training: {}\n  gpuinfra:training: {}\n"),
    Bad("binary-junk", text="config: \x00\x01\x02\n"),
    # YAML 1.1 reads 1_6 as 16, YAML 1.2's core schema as text (issue 32)
    Bad(
        "underscore-number",
        text="config:\n  gpuinfra:training:\n    name: x\n    compute: {node_count: 1_6}\n",
        path=SPEC + "compute.node_count",
    ),
]


def run_cli(capsys: Any, monkeypatch: Any, *args: str) -> tuple[int, str, str]:
    """The console entry point in-process (as `gpuinfra ...`): its exit code, stdout and stderr."""
    import sys

    import pytest
    from gpuinfra.cli import main

    monkeypatch.setattr(sys, "argv", ["gpuinfra", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    out, err = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), out, err


__all__ = ["CORPUS", "Bad", "run_cli"]
