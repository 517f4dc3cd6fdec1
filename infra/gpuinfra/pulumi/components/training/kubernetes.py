"""What a Kubernetes training cluster needs on top of its nodes: device plugins, Kueue (one GPU flavor for the
fabric domain, a ClusterQueue holding exactly the job's GPUs, fabric devices, CPU and memory, the team's
LocalQueue, a Topology for topology-aware placement), the Lustre volume, inventory labels on named nodes, and
a JobSet template that requests what the nodes offer.

Shared by EKS (AWS) and on-premises clusters; everything goes through the explicit provider given. Versions of
every chart and image are in `pins.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpuinfra.catalog.pins import CHARTS
from gpuinfra.graph import pod_security
from gpuinfra.plan.jobs import PodSize
from gpuinfra.pulumi.components.kueue import queues, resource_flavor, topology
from gpuinfra.pulumi.components.training.acceptance import (
    acceptance_jobset,
    acceptance_pod,
    acceptance_script,
    create_acceptance,
)
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_NOW_FILE, Retention
from gpuinfra.pulumi.components.training.mount_check import lustre_check_args
from gpuinfra.pulumi.components.training.pod_stop import NOW_DIR, grace_seconds, pre_stop
from gpuinfra.pulumi.components.training.pruner import create_pruner, cronjob_spec
from gpuinfra.pulumi.templates import render

TYPE = "gpuinfra:training:Kubernetes"
KUEUE_CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
RELEASE_TIMEOUT_SECONDS = 900
"""How long a chart's install may take to become ready (Release `timeout`; Helm's default is 300 s)."""
EFA = "vpc.amazonaws.com/efa"
RDMA = "rdma/ib"
POOL_LABEL = "gpuinfra.io/pool"
DOMAIN_LABEL = "gpuinfra.io/fabric-domain"
RACK_LABEL = "gpuinfra.io/rack"
COOLING_LABEL = "gpuinfra.io/cooling-loop"
POWER_LABEL = "gpuinfra.io/power-domain"
SITE_LABEL = "gpuinfra.io/site"
CAPACITY_JOB_LABEL = "gpuinfra.io/capacity"
HOST_LABEL = "kubernetes.io/hostname"
PODS_READY_TIMEOUT = "30m"
"""waitForPodsReady: time for every pod of an admitted JobSet to run. A fresh node pulls a ~20 GB trainer image
and a spot replacement takes minutes to join; past this the workload is evicted and requeued whole."""


@dataclass(frozen=True)
class Flavor:
    """The one Kueue ResourceFlavor of a fabric domain: the nodes one tightly coupled job may span."""

    name: str
    node_labels: dict[str, str]
    topology: str | None = None


@dataclass(frozen=True)
class Topology:
    """A Kueue Topology: node labels from the broadest level to the host, and the level a job prefers."""

    name: str
    levels: tuple[str, ...]
    preferred: str


@dataclass(frozen=True)
class LustreVolume:
    """FSx for Lustre through its CSI driver (a static PV, as in the driver's static-provisioning example)."""

    capacity_gib: int
    mount_path: str
    csi: Mapping[str, Any]
    """{"driver", "volume_handle", "volume_attributes"}; values may be Outputs."""


@dataclass(frozen=True)
class SiteMount:
    """The site's Lustre, mounted by every node's Lustre client at `path`. The pod checks the mount before the
    trainer starts: a missing client mount leaves an empty directory, and checkpoints would go to the root disk."""

    path: str
    fs_name: str


@dataclass(frozen=True)
class NodeLabels:
    node: str
    labels: dict[str, str]


@dataclass(frozen=True)
class JobArgs:
    image: str
    script: str
    """Absolute path of the training script (under the shared file system's mount)."""
    args: Sequence[str]
    pod: PodSize
    max_restarts: int
    spot: bool
    checkpoint_window: int | None = None
    """Seconds the preStop hook gives the trainer to checkpoint before SIGTERM (pod_stop.py); None: the job does
    not checkpoint, no hook."""
    grace_seconds: int | None = None
    """terminationGracePeriodSeconds when the platform bounds it (GKE Spot: the pod's share of the 30 s notice);
    None: the window, torchrun's shutdown and a margin (pod_stop.grace_seconds)."""


@dataclass(frozen=True)
class ClaimMount:
    """A further shared file system the trainer mounts through its claim (GKE: /home on Filestore)."""

    name: str
    claim: str
    mount_path: str
    why: str


@dataclass(frozen=True)
class HostMount:
    """A node directory mounted read-only into the trainer, and why it is needed (a comment in the template)."""

    name: str
    host_path: str
    mount_path: str
    why: str


RDMA_FABRICS = ("infiniband", "efa", "roce")
"""Fabrics whose verbs register (pin) memory: the trainer keeps IPC_LOCK on them (docs/security.md)."""


@dataclass(frozen=True)
class WorkloadArgs:
    cluster: str
    namespace: str
    queue: str
    """The team's LocalQueue."""
    platform: str
    """eks or onprem."""
    fabric: str
    """efa, infiniband, roce (GKE's GPUDirect RDMA: its NICs are pod networks, not a device resource) or none."""
    nodes: int
    gpus_per_node: int
    fabric_per_node: int
    flavor: Flavor
    job: JobArgs
    env: dict[str, str]
    labels: dict[str, str]
    mount_path: str
    lustre: LustreVolume | None = None
    site_mount: SiteMount | None = None
    topology: Topology | None = None
    node_labels: Sequence[NodeLabels] = ()
    cohort: str | None = None
    """Kueue cohort of the teams sharing a site (on premises)."""
    service_account: str | None = None
    """The trainer's ServiceAccount (EKS: bound to an IAM role by Pod Identity)."""
    cluster_queue: str = ""
    region: str | None = None
    """AWS region: given to add-ons that would otherwise ask the instance metadata service."""
    device_resource: str = ""
    """The extended resource the accelerators are requested as (the plan's, from the catalog)."""
    retention: Retention | None = None
    """Checkpoint retention the pruner CronJob applies (pruner.py); None: no pruner."""
    fabric_device: str = ""
    """The extended resource the fabric is requested as, where the site's device plugin names it (on premises);
    empty: the platform's (EFA's vpc.amazonaws.com/efa, the RDMA plugin's default rdma/ib)."""
    instance_type: str = ""
    network_gbps: float | None = None
    """The node's network rate (catalog): the NCCL acceptance job's floor; None: no acceptance job."""
    pod_annotations: tuple[tuple[str, str], ...] = ()
    """Annotations on every trainer pod beside Kueue's (GKE: the multi-network interfaces the RDMA NICs need)."""
    host_mounts: tuple[HostMount, ...] = ()
    """Host directories the trainer reads (GKE: the gIB NCCL plugin its RDMA installer puts on the node)."""
    claim_mounts: tuple[ClaimMount, ...] = ()
    """Further claims the trainer mounts read-write beside the shared file system (GKE: /home on Filestore)."""


def fabric_resource(fabric: str) -> str | None:
    return {"efa": EFA, "infiniband": RDMA}.get(fabric)


def pod_devices(args: WorkloadArgs) -> dict[str, int]:
    assert args.device_resource, "the training plan names the accelerators' resource (catalog devices)"
    devices = {args.device_resource: args.gpus_per_node}
    fabric = args.fabric_device or fabric_resource(args.fabric)
    if fabric:
        devices[fabric] = args.fabric_per_node
    return devices


def pod_requests(args: WorkloadArgs) -> dict[str, str | int]:
    """Everything one training pod requests (= its limits: Guaranteed QoS)."""
    return {
        "cpu": str(args.job.pod.cpu_millicores // 1000),
        "memory": f"{args.job.pod.memory_mib}Mi",
        **pod_devices(args),
    }


def queue_name(args: WorkloadArgs) -> str:
    return args.cluster_queue or args.cluster


def cluster_queue_spec(args: WorkloadArgs) -> dict[str, Any]:
    """Nominal quota = the job's GPUs, fabric devices, CPU and memory, in the one flavor of its fabric domain
    (Kueue fits a pod set into one flavor: kueue docs, concepts/cluster_queue, "Flavors and borrowing
    semantics"; a resource the queue does not cover makes a workload inadmissible)."""
    n = args.nodes
    per_pod = pod_requests(args)
    quotas: list[dict[str, Any]] = [
        {"name": "cpu", "nominalQuota": str(int(str(per_pod["cpu"])) * n)},
        {"name": "memory", "nominalQuota": f"{args.job.pod.memory_mib * n}Mi"},
        *({"name": name, "nominalQuota": count * n} for name, count in pod_devices(args).items()),
    ]
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {
            "withinClusterQueue": "LowerPriority",
            "reclaimWithinCohort": "Any" if args.cohort else "Never",
            "borrowWithinCohort": {"policy": "Never"},
        },
        "resourceGroups": [
            {
                "coveredResources": [q["name"] for q in quotas],
                "flavors": [{"name": args.flavor.name, "resources": quotas}],
            }
        ],
    }
    if args.cohort:
        spec["cohortName"] = args.cohort
    return spec


def kueue_config(frameworks: Sequence[str] = ("batch/job", "jobset.x-k8s.io/jobset")) -> str:
    """Kueue's Configuration (chart value managerConfig.controllerManagerConfigYaml, which replaces the chart's
    file whole): the chart's own server settings (ports its Deployment and Services use), the integrations the
    stacks submit, and waitForPodsReady for all-or-nothing starts (requeue on a partial start)."""
    config = {
        "apiVersion": KUEUE_CONFIG_API,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "integrations": {"frameworks": list(frameworks)},
        "waitForPodsReady": {
            "timeout": PODS_READY_TIMEOUT,
            "recoveryTimeout": PODS_READY_TIMEOUT,
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
        },
    }
    return json.dumps(config, indent=2, sort_keys=True) + "\n"


def device_toleration(resource: str) -> dict[str, str]:
    """Accelerator nodes are tainted with the extended resource their device plugin advertises as the key (the
    EKS user guide's GPU node groups: `nvidia.com/gpu`; the resource is the catalog's, `Catalog.k8s_resource`), so
    only pods that tolerate it, with any value, land there: the job, its device plugins and node agents."""
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


def pinned_release(name: str, chart: str, values: dict[str, Any], o: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
    """The chart at its pin (catalog/pins.py: source, version, namespace, repository when not OCI), in a namespace
    of its own, given RELEASE_TIMEOUT_SECONDS to become ready: Helm's own default is 300 s, and a first install
    pulls images onto fresh nodes. Every cluster a stack owns installs its charts so (EKS's add-ons, GKE's Kueue
    and JobSet)."""
    pin = CHARTS[chart]
    return k8s.helm.v3.Release(
        f"{name}-{chart}",
        name=chart,
        chart=pin.source,
        version=pin.version,
        namespace=pin.namespace,
        create_namespace=True,
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo) if pin.repo else None,
        values=values,
        timeout=RELEASE_TIMEOUT_SECONDS,
        opts=o,
    )


def kueue_values() -> dict[str, Any]:
    """The Kueue chart's values wherever a stack installs it (EKS, GKE): topology-aware scheduling, and the
    manager's configuration (kueue_config)."""
    return {
        # TopologyAwareScheduling is beta and on by default since Kueue 0.14; stated so a pin back fails loudly.
        "controllerManager": {"featureGates": [{"name": "TopologyAwareScheduling", "enabled": True}]},
        "managerConfig": {"controllerManagerConfigYaml": kueue_config()},
    }


def chart_values(args: WorkloadArgs) -> dict[str, dict[str, Any]]:
    """Helm values per chart, each a key of the chart's values.yaml at the pin."""
    toleration = device_toleration(args.device_resource)
    return {
        "kueue": kueue_values(),
        # EKS user guide (ml-eks-k8s-device-plugin): install with gfd.enabled=true; GFD brings NFD, whose worker
        # must tolerate the GPU taint with any value (the chart's own toleration expects value "present").
        "nvidia-device-plugin": {
            "gfd": {"enabled": True},
            "nfd": {"worker": {"tolerations": [toleration]}},
            "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, toleration],
        },
        "aws-efa-k8s-device-plugin": {"tolerations": [toleration]},
        # The controller looks its region up in IMDS unless told (values.yaml controller.region); pods reach no
        # IMDS at hop limit 1. The node plugin falls back to the Kubernetes API (aws-fsx-csi-driver PR #397).
        **({"aws-fsx-csi-driver": {"controller": {"region": args.region}}} if args.region else {}),
    }


def job_template(args: WorkloadArgs, claim: str | None) -> str:
    return render(
        "kubernetes/jobset.yaml.j2",
        cluster=args.cluster,
        namespace=args.namespace,
        queue=args.queue,
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        resources=pod_requests(args),
        env=args.env,
        image=args.job.image,
        script=args.job.script,
        script_args=list(args.job.args),
        mount_path=args.mount_path,
        claim=claim,
        site_mount=args.site_mount,
        mount_check=lustre_check_args(args.site_mount.path, args.site_mount.fs_name) if args.site_mount else None,
        shm=f"{args.job.pod.shm_mib}Mi",
        topology_level=args.topology.preferred if args.topology else None,
        ipc_lock=args.fabric in RDMA_FABRICS,
        max_restarts=args.job.max_restarts,
        grace_seconds=args.job.grace_seconds or grace_seconds(args.job.checkpoint_window),
        pre_stop=pre_stop(args.job.checkpoint_window) if args.job.checkpoint_window else None,
        now_file=CHECKPOINT_NOW_FILE,
        now_dir=NOW_DIR,
        capacity="spot" if args.job.spot else "on-demand",
        capacity_label=CAPACITY_JOB_LABEL,
        service_account=args.service_account,
        gpu_toleration=device_toleration(args.device_resource),
        annotations=args.pod_annotations,
        host_mounts=args.host_mounts,
        claim_mounts=args.claim_mounts,
    )


def acceptance_config_map(args: WorkloadArgs) -> str:
    return f"{args.cluster}-nccl-acceptance"


def nccl_acceptance_pod(args: WorkloadArgs) -> dict[str, Any]:
    """One node's acceptance pod (acceptance.py): a training pod's requests, GPU toleration and fabric settings."""
    config_map = acceptance_config_map(args)
    return acceptance_pod(
        pod_requests(args),
        args.env,
        args.fabric,
        device_toleration(args.device_resource),
        config_map,
        f"{config_map}-ssh",
        f"{args.job.pod.shm_mib}Mi",
        args.fabric in RDMA_FABRICS,
        args.topology.preferred if args.topology else None,
    )


def nccl_acceptance(args: WorkloadArgs) -> tuple[str, dict[str, Any]] | None:
    """The NCCL acceptance job's script and JobSet (acceptance.py), requesting what a training pod requests; None
    without GPUs or a network figure to judge the fabric by."""
    if not args.gpus_per_node or args.network_gbps is None:
        return None
    config_map = acceptance_config_map(args)
    pod = nccl_acceptance_pod(args)
    jobset = acceptance_jobset(args.cluster, args.namespace, args.queue, args.nodes, pod)
    script = acceptance_script(
        args.cluster, args.nodes, args.gpus_per_node, args.instance_type, args.network_gbps, f"configmap/{config_map}"
    )
    return script, jobset


def disruption_budget(
    name: str, args: WorkloadArgs, namespace: pulumi.Input[str], o: pulumi.ResourceOptions
) -> k8s.policy.v1.PodDisruptionBudget:
    """No voluntary eviction of a running training pod: every worker of the gang must stay (minAvailable = the
    job's pod count), since evicting one restarts the whole JobSet. A managed node group update then waits for the
    budget and fails (PodEvictionFailure after 15 minutes) instead of draining a node under the run: updates happen
    between runs (EKS User Guide, "Understand each phase of node updates": the upgrade phase honours
    PodDisruptionBudgets unless forced). Spot reclaims are not voluntary evictions and still end the pod with
    SIGTERM (the checkpoint contract)."""
    return k8s.policy.v1.PodDisruptionBudget(
        f"{name}-training-pdb",
        metadata={"name": f"{args.cluster}-training", "namespace": namespace, "labels": args.labels},
        spec={"minAvailable": args.nodes, "selector": {"matchLabels": {"gpuinfra.io/workload": "training"}}},
        opts=o,
    )


def checkpoint_volume(args: WorkloadArgs, claim: str | None) -> dict[str, Any]:
    """The shared file system as the pruner mounts it: the Lustre claim, else the site's host path."""
    site = args.site_mount
    if claim is not None:
        return {"persistentVolumeClaim": {"claimName": claim}}
    return {"hostPath": {"path": site.path if site else args.mount_path, "type": "Directory"}}


def training_pods(args: WorkloadArgs, claim: str | None, volume: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pod spec the namespace will run: the JobSet template's workers and, with retention, the pruner."""
    jobset = yaml.safe_load(job_template(args, claim))
    pods = [job["template"]["spec"]["template"]["spec"] for job in jobset["spec"]["replicatedJobs"]]
    acceptance = nccl_acceptance(args)
    if acceptance is not None:
        pods.append(acceptance[1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"])
    if args.retention is not None:
        pods.append(
            cronjob_spec(args.cluster, args.job.image, args.mount_path, volume, "")["jobTemplate"]["spec"]["template"][
                "spec"
            ]
        )
    return pods


POD_IDENTITY_AGENT = ("169.254.170.23/32", "fd00:ec2::23/128")
"""The EKS Pod Identity agent's addresses (IPv4, IPv6), on every node's host network, port 80 (EKS User Guide, "EKS
Pod Identity" considerations: the agent uses the node's hostNetwork, port 80 and 2703 on a link-local address; 2703
is its own health probe)."""


def egress_rules(pod_identity: bool) -> list[dict[str, Any]]:
    """The namespace's egress: its own pods, DNS, HTTPS (S3, ECR, AWS APIs) and, on EKS, the Pod Identity agent,
    whose credentials the pruner and the trainers' S3 calls need (the review's finding T2: without it the pruner
    never tags a checkpoint and keeps them all)."""
    rules: list[dict[str, Any]] = [
        {"to": [{"pod_selector": {}}]},
        {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
        {"ports": [{"protocol": "TCP", "port": 443}]},
    ]
    if pod_identity:
        rules.append(
            {
                "to": [{"ip_block": {"cidr": cidr}} for cidr in POD_IDENTITY_AGENT],
                "ports": [{"protocol": "TCP", "port": 80}],
            }
        )
    return rules


def isolate(
    name: str,
    namespace: pulumi.Input[str],
    labels: Mapping[str, str],
    o: pulumi.ResourceOptions,
    pod_identity: bool = False,
) -> None:
    """Deny all traffic in the namespace, then allow what a training job needs: every pod to every pod of the
    namespace on any port (the JobSet's rendezvous through its headless Service, NCCL's bootstrap and socket
    transport, which pick ports at run time), DNS, and HTTPS out (S3, ECR, AWS APIs). EFA and InfiniBand traffic
    bypasses the kernel's IP stack and no NetworkPolicy sees it; Lustre is mounted by the node, not the pod.
    Kubernetes docs, "Network Policies": a policy selecting all pods with both policy types and no rules is the
    default deny; policies are additive."""
    meta = {"namespace": namespace, "labels": dict(labels)}
    k8s.networking.v1.NetworkPolicy(
        f"{name}-default-deny",
        metadata={**meta, "name": "default-deny"},
        spec={"pod_selector": {}, "policy_types": ["Ingress", "Egress"]},
        opts=o,
    )
    k8s.networking.v1.NetworkPolicy(
        f"{name}-training-allow",
        metadata={**meta, "name": "training"},
        spec={
            "pod_selector": {},
            "policy_types": ["Ingress", "Egress"],
            "ingress": [{"from": [{"pod_selector": {}}]}],
            "egress": egress_rules(pod_identity),
        },
        opts=o,
    )


class TrainingWorkloads(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: WorkloadArgs,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
        nodes: Sequence[pulumi.Resource] = (),
    ) -> None:
        """`nodes`: the node groups the add-ons' pods schedule on; each Helm release depends on them explicitly (a
        release waits for its pods to be ready, which cannot happen before a node group exists)."""
        super().__init__(TYPE, name, None, opts)
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        claim = f"{args.cluster}-lustre" if args.lustre is not None else None
        volume = checkpoint_volume(args, claim)
        namespace = self._namespace(name, args, training_pods(args, claim, volume), o)
        ns = namespace.metadata["name"]
        isolate(name, ns, args.labels, o, pod_identity=args.platform == "eks")
        charts = self._addons(
            name, args, pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=list(nodes)))
        )
        self._kueue(name, args, ns, pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=charts)))
        self._nodes_and_identity(name, args, ns, o)
        if args.lustre is not None and claim is not None:
            self._lustre(name, args, args.lustre, claim, namespace, o)
        self._jobs(name, args, claim, volume, ns, o)
        self.register_outputs({"namespace": args.namespace, "cluster_queue": queue_name(args)})

    @staticmethod
    def _namespace(
        name: str, args: WorkloadArgs, pods: list[dict[str, Any]], o: pulumi.ResourceOptions
    ) -> k8s.core.v1.Namespace:
        """The job's namespace, at the strictest Pod Security level every pod it will run meets."""
        enforce = pod_security.strictest_for(pods)
        return k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": args.namespace, "labels": {**args.labels, **pod_security.labels(enforce)}},
            opts=o,
        )

    @staticmethod
    def _kueue(name: str, args: WorkloadArgs, namespace: pulumi.Input[str], crds: pulumi.ResourceOptions) -> None:
        """Kueue's objects (after its chart, whose CRDs they need): the Topology, the fabric domain's flavor, the
        ClusterQueue holding the job's quota and the team's LocalQueue."""
        if args.topology:
            topology(name, args.topology.name, args.topology.levels, args.labels, crds)
        toleration = device_toleration(args.device_resource)
        flavor_spec: dict[str, Any] = {"nodeLabels": args.flavor.node_labels, "tolerations": [toleration]}
        if args.flavor.topology:
            flavor_spec["topologyName"] = args.flavor.topology
        resource_flavor(name, args.flavor.name, flavor_spec, args.labels, crds)
        queues(name, queue_name(args), cluster_queue_spec(args), args.queue, namespace, args.labels, crds)

    @staticmethod
    def _nodes_and_identity(
        name: str, args: WorkloadArgs, namespace: pulumi.Input[str], o: pulumi.ResourceOptions
    ) -> None:
        """Inventory labels on the named nodes, and the trainer's ServiceAccount (EKS: bound by Pod Identity)."""
        for node in args.node_labels:
            k8s.core.v1.NodePatch(
                f"{name}-node-{node.node}", metadata={"name": node.node, "labels": node.labels}, opts=o
            )
        if args.service_account:
            k8s.core.v1.ServiceAccount(
                f"{name}-trainer-sa",
                metadata={"name": args.service_account, "namespace": namespace, "labels": args.labels},
                opts=o,
            )

    @staticmethod
    def _jobs(
        name: str,
        args: WorkloadArgs,
        claim: str | None,
        volume: dict[str, Any],
        namespace: pulumi.Input[str],
        o: pulumi.ResourceOptions,
    ) -> None:
        """What runs in the namespace: the gang's disruption budget, the pruner, the NCCL acceptance job and the
        training JobSet's template."""
        disruption_budget(name, args, namespace, o)
        if args.retention is not None:
            create_pruner(
                name, args.cluster, args.retention, args.job.image, args.mount_path, volume, namespace, args.labels, o
            )
        acceptance = nccl_acceptance(args)
        if acceptance is not None:
            create_acceptance(name, args.cluster, namespace, args.labels, *acceptance, o)
        k8s.core.v1.ConfigMap(
            f"{name}-job-template",
            metadata={"name": f"{args.cluster}-job-template", "namespace": namespace, "labels": args.labels},
            data={"jobset.yaml": job_template(args, claim)},
            opts=o,
        )

    @staticmethod
    def _addons(name: str, args: WorkloadArgs, o: pulumi.ResourceOptions) -> list[pulumi.Resource]:
        """The cluster-wide add-ons of a cluster the stack owns (EKS). On premises the cluster is shared: Kueue,
        JobSet and the device plugins are the site's (declared in the organization file and checked by
        `site-components-missing`); a stack installing them would fail where they exist ("cannot re-use a name
        that is still in use") and replace the site's one Kueue Configuration where they do not."""
        if args.platform != "eks":
            return []
        wanted = ["kueue", "jobset", "nvidia-device-plugin"]
        if args.fabric == "efa":
            wanted.append("aws-efa-k8s-device-plugin")
        if args.lustre is not None:
            wanted.append("aws-fsx-csi-driver")
        values = chart_values(args)
        return [pinned_release(name, chart, values.get(chart, {}), o) for chart in wanted]

    @staticmethod
    def _lustre(
        name: str,
        args: WorkloadArgs,
        lustre: LustreVolume,
        claim: str,
        namespace: k8s.core.v1.Namespace,
        o: pulumi.ResourceOptions,
    ) -> None:
        lustre_claim(name, args.labels, lustre, claim, namespace.metadata["name"], o)


def lustre_claim(
    name: str,
    labels: Mapping[str, str],
    lustre: LustreVolume,
    claim: str,
    namespace: pulumi.Input[str],
    o: pulumi.ResourceOptions,
) -> None:
    """A static PersistentVolume for the file system and the claim bound to it by name (the CSI drivers'
    static-provisioning examples: FSx's, GKE Managed Lustre's)."""
    static_claim(f"{name}-lustre", labels, (lustre.capacity_gib, lustre.csi), claim, namespace, o, ("flock",))


def static_claim(
    name: str,
    labels: Mapping[str, str],
    share: tuple[int, Mapping[str, Any]],
    claim: str,
    namespace: pulumi.Input[str],
    o: pulumi.ResourceOptions,
    mount_options: tuple[str, ...] = (),
) -> k8s.core.v1.PersistentVolumeClaim:
    """A shared file system's static PersistentVolume (`<name>-pv`; `share` is its capacity in GiB and its CSI
    source) and the claim bound to it by name (`<name>-pvc`): Lustre's, or GKE's Filestore /home."""
    capacity_gib, csi = share
    volume = k8s.core.v1.PersistentVolume(
        f"{name}-pv",
        metadata={"name": claim, "labels": dict(labels)},
        spec={
            "capacity": {"storage": f"{capacity_gib}Gi"},
            "access_modes": ["ReadWriteMany"],
            "persistent_volume_reclaim_policy": "Retain",
            "storage_class_name": "",
            **({"mount_options": list(mount_options)} if mount_options else {}),
            "csi": dict(csi),
        },
        opts=o,
    )
    return k8s.core.v1.PersistentVolumeClaim(
        f"{name}-pvc",
        metadata={"name": claim, "namespace": namespace, "labels": dict(labels)},
        spec={
            "access_modes": ["ReadWriteMany"],
            "storage_class_name": "",
            "volume_name": volume.metadata["name"],
            "resources": {"requests": {"storage": f"{capacity_gib}Gi"}},
        },
        opts=o,
    )


__all__ = [
    "DOMAIN_LABEL",
    "EFA",
    "POOL_LABEL",
    "RACK_LABEL",
    "RDMA",
    "RDMA_FABRICS",
    "TYPE",
    "ClaimMount",
    "Flavor",
    "HostMount",
    "JobArgs",
    "LustreVolume",
    "NodeLabels",
    "SiteMount",
    "Topology",
    "TrainingWorkloads",
    "WorkloadArgs",
    "chart_values",
    "cluster_queue_spec",
    "device_toleration",
    "fabric_resource",
    "job_template",
    "kueue_config",
    "kueue_values",
    "lustre_claim",
    "nccl_acceptance",
    "nccl_acceptance_pod",
    "pinned_release",
    "pod_requests",
    "static_claim",
]
