"""Serving on existing Kubernetes clusters, one per region: a Deployment requesting GPUs on nodes of the
right product, probes sized by the cold start, a graceful preStop, a Service, a PodDisruptionBudget, and
queue-depth autoscaling (an autoscaling/v2 HPA on an external metric, or a KEDA ScaledObject)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.graph import pod_security, tokens
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.rollout import KUBERNETES_SURGE
from gpuinfra.plan.serving import RegionPlan
from gpuinfra.pulumi.components.alerts import alert_topic
from gpuinfra.pulumi.components.inference.access_logs import PREFIX as ACCESS_LOG_PREFIX
from gpuinfra.pulumi.components.inference.access_logs import access_log_bucket
from gpuinfra.pulumi.components.inference.endpoint import log_bucket_name
from gpuinfra.pulumi.components.inference.engine import TRTLLM_CONFIG, engine_args, engine_config
from gpuinfra.pulumi.components.inference.external_metric import METRIC_LABEL, external_metric
from gpuinfra.pulumi.components.inference.images import mirror_repository, mirrored_image
from gpuinfra.pulumi.components.inference.nodes import (
    NODE_CLASS_API,
    NODE_POOL_API,
    NodePoolPlan,
    node_class_name,
    node_class_spec,
    node_pool_spec,
    node_pools,
)
from gpuinfra.pulumi.components.inference.pod_drain import drain_command, grace_seconds
from gpuinfra.pulumi.components.inference.pod_weights import WEIGHTS_DIR, weights_init_containers
from gpuinfra.pulumi.components.inference.region import root_volume_gib
from gpuinfra.pulumi.components.inference.routing import GlobalRouting, RegionalTarget, RoutingArgs, zone_vpcs
from gpuinfra.pulumi.components.inference.service_lb import (
    ServiceLoadBalancer,
    access_log_annotations,
    service_load_balancer,
)
from gpuinfra.pulumi.components.inference.service_lb import service_annotations as findable_by_stack
from gpuinfra.pulumi.components.inference.slo import SloArgs, slo_alarms
from gpuinfra.pulumi.components.training.kubernetes import device_toleration
from gpuinfra.spec import FleetRegion, InferenceSpec, Registry
from gpuinfra.spec.org import Alerts, ServingClusterComponents

FLEET_TYPE = "gpuinfra:inference:KubernetesFleet"
REGION_TYPE = "gpuinfra:inference:KubernetesRegion"
PROBE_TIMEOUT_SECONDS = 10
"""/health on a loaded GPU server: well above the 1 s default, below the 15 s readiness period."""
LIVENESS_TIMEOUT_SECONDS = 30
"""A liveness check may wait longer still: a miss restarts the pod (weights again, a cold start)."""
READINESS_GATE_LABEL = "elbv2.k8s.aws/pod-readiness-gate-inject"
CACHE_GIB = 10
"""Scratch for HF, torch.compile and vLLM caches (the `cache` emptyDir)."""
WEIGHTS_SLACK = 1.1
"""Room on the weights volume above the planned weights (tokenizer, configs, the manifest)."""


def weights_volume_gib(weights_bytes: int) -> int:
    """The weights emptyDir's size limit: the planned weights with slack, in whole GiB."""
    return math.ceil(weights_bytes * WEIGHTS_SLACK / 2**30)


@dataclass(frozen=True)
class Accelerators:
    """What a server pod asks Kubernetes for: the accelerators' extended resource and the node label that picks
    nodes of the planned type, both read from the catalog (accelerators.yaml `devices`)."""

    resource: str
    node_selector: dict[str, str]


def accelerators(catalog: Catalog, instance_type: str, product_label: str | None = None) -> Accelerators:
    """The catalog's resource and node selector for the type; `product_label` (the spec's gpu_product_label)
    replaces the product label's value on a GPU node. A type the catalog knows no device for is a bug upstream
    (the serving validators refuse it before any component runs)."""
    device = catalog.device(instance_type)
    assert device is not None, f"{instance_type}: no accelerator device in the catalog"
    selector = catalog.node_selector(instance_type)
    if product_label and device.node_value == "product":
        selector = {device.node_label: product_label}
    assert selector, f"{instance_type}: the catalog has no node label for its accelerator"
    return Accelerators(device.k8s_resource, selector)


@dataclass(frozen=True)
class KubernetesFleetArgs:
    spec: InferenceSpec
    plan: InferencePlan
    registry: Registry
    tags: dict[str, str]
    catalog: Catalog
    account_id: str
    """The fleet's account: its NLB access-log buckets live there."""
    clusters: Mapping[str, ServingClusterComponents] = field(default_factory=dict)
    """Per region, what its cluster declares it runs (the organization file; cluster-components-missing refuses a
    stack whose clusters declare none)."""
    alerts: Alerts | None = None
    """The account's `alerts` (organization file), which each region's paging alarm reaches."""


def startup_failure_threshold(cold_start_seconds: float, period_seconds: int = 10) -> int:
    """Probe failures tolerated while weights load: the cold start plus a minute of slack."""
    return math.ceil((cold_start_seconds + 60) / period_seconds)


COLD_START_MARGIN = 2
"""The planner's cold start runs short of published ones (its worst calibration case, an L40S cold start, at 0.57x:
docs/planning.md), so a rollout is given twice the planned figure."""
SCHEDULING_SECONDS = 300
"""Karpenter's decision and the EC2 launch before the node's own boot starts (an allowance, not a measurement)."""
MAX_SURGE = KUBERNETES_SURGE


def rollout_timeouts(
    cold_start_seconds: float, max_replicas: int, release_wait_seconds: int = 0
) -> pulumi.CustomTimeouts:
    """How long Pulumi waits for the Deployment to become Available (its default is 10 minutes, after which the
    update is marked failed: Pulumi Kubernetes, apps/v1 Deployment). Create: one pod on a new node (scheduling, then
    the planned cold start, boot to healthy, with its margin). Update: the rolling update replaces up to
    max_replicas pods MAX_SURGE at a time, each one a cold start. Both after `release_wait_seconds`, the longest the
    region's first new pod may wait for a new release to replicate (the plan's rollout order: 0 in the registry's
    home region), since its `verify` init container fails until the manifest is there."""
    one = math.ceil(SCHEDULING_SECONDS + COLD_START_MARGIN * cold_start_seconds)
    update = release_wait_seconds + one * math.ceil(max_replicas / MAX_SURGE)
    return pulumi.CustomTimeouts(create=f"{release_wait_seconds + one}s", update=f"{update}s")


def labels(spec: InferenceSpec, stack_tags: dict[str, str]) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": spec.name,
        "app.kubernetes.io/managed-by": "gpuinfra",
        tokens.WORKLOAD_LABEL: stack_tags["workload"],
        "gpuinfra.io/stack": stack_tags["gpuinfra:stack"],
    }


RUN_AS = 10001
"""Non-root UID the containers run as (restricted Pod Security Standard), 10,000 or more so that no account of the
node shares it (the EKS AL2023 AMI's ec2-user is UID 1000; checkov CKV_K8S_40)."""
CACHE_DIR = "/cache"
"""Writable home and caches (HF, torch.compile, vLLM) for a non-root user on a read-only image."""
TMP_GIB = 1
"""The /tmp emptyDir every container writes its temporary files to (vLLM's IPC sockets, Python's tempfile): the
root file system is read-only."""
TMP_MOUNT = {"name": "tmp", "mount_path": "/tmp"}


def restricted_context() -> dict[str, Any]:
    """Container security context of the restricted Pod Security Standard (Kubernetes docs, Pod Security
    Standards: non-root, no privilege escalation, all capabilities dropped, RuntimeDefault seccomp)."""
    return {
        "run_as_non_root": True,
        "run_as_user": RUN_AS,
        "allow_privilege_escalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccomp_profile": {"type": "RuntimeDefault"},
        "read_only_root_filesystem": True,
    }


def pod_requests(vcpu: int, memory_gib: int) -> dict[str, str]:
    """CPU and memory a server pod requests from its node: the instance less one vCPU and a quarter of its
    memory for the kubelet's reserve, eviction threshold and DaemonSets (one GPU pod per node), so the
    pod is Guaranteed-sized rather than BestEffort and first to be evicted."""
    return {"cpu": str(max(1, vcpu - 1)), "memory": f"{max(1, memory_gib * 3 // 4)}Gi"}


def image_ref(image: str, digest: str | None) -> str:
    if digest is None:
        return image
    repository = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
    return f"{repository}@{digest}"


CACHE_ENV = [
    {"name": "HOME", "value": CACHE_DIR},
    {"name": "XDG_CACHE_HOME", "value": CACHE_DIR},
    {"name": "VLLM_CACHE_ROOT", "value": f"{CACHE_DIR}/vllm"},
]
"""Home and caches on the writable `cache` volume (the image's root is read-only to the non-root user)."""


def deployment_spec(
    spec: InferenceSpec,
    rp: RegionPlan,
    bucket: str,
    model_prefix: str,
    devices: Accelerators,
    pod_labels: dict[str, str],
    engine: Engine,
    node: tuple[int, int] = (4, 16),
    weights_bytes: int = 16 * 10**9,
    mirror: str | None = None,
) -> dict[str, Any]:
    """The Deployment's spec as plain data (pure, tested alone). No `replicas`: the autoscaler owns the count
    (Kubernetes docs, HorizontalPodAutoscaler: remove spec.replicas from manifests under an HPA). `mirror`: the
    fleet's ECR repository in the region (image_source ecr_mirror), pulled by the spec's digest."""
    server_image = image_ref(mirror or spec.server_image, spec.server_image_digest)
    weights_gib = weights_volume_gib(weights_bytes)
    weights = f"s3://{bucket}/{model_prefix}{spec.model.weights_prefix}"
    pod = pod_spec(spec, rp, devices)
    # Weights are synced, then checked against the registry's manifest, before the server starts.
    pod["init_containers"] = weights_init_containers(
        spec.name,
        weights,
        rp.region,
        server_image,
        CACHE_ENV,
        restricted_context(),
        {"name": "cache", "mount_path": CACHE_DIR},
    )
    pod["containers"] = [server_container(spec, rp, devices, server_image, pod_requests(*node), weights_gib, engine)]
    for container in [*pod["init_containers"], *pod["containers"]]:
        container["volume_mounts"].append(TMP_MOUNT)
    pod["volumes"] = [
        {"name": "weights", "empty_dir": {"size_limit": f"{weights_gib}Gi"}},
        {"name": "shm", "empty_dir": {"medium": "Memory", "size_limit": "16Gi"}},
        {"name": "cache", "empty_dir": {"size_limit": f"{CACHE_GIB}Gi"}},
        {"name": "tmp", "empty_dir": {"size_limit": f"{TMP_GIB}Gi"}},
    ]
    metadata: dict[str, Any] = {"labels": pod_labels}
    options = engine_config(spec.model, spec.engine)
    if options is not None:
        mount_engine_config(pod, spec.name, options)
        # A new options file is a new pod template, so it rolls out (a ConfigMap edit alone restarts nothing).
        metadata["annotations"] = {ENGINE_CONFIG_ANNOTATION: hashlib.sha256(options.encode()).hexdigest()}
    return {
        "selector": {"match_labels": {"app.kubernetes.io/name": spec.name}},
        "strategy": {"type": "RollingUpdate", "rolling_update": {"max_surge": MAX_SURGE, "max_unavailable": 0}},
        "template": {"metadata": metadata, "spec": pod},
    }


ENGINE_CONFIG_ANNOTATION = "gpuinfra.io/engine-config-sha256"
ENGINE_CONFIG_KEY = TRTLLM_CONFIG.rsplit("/", 1)[1]
"""The ConfigMap's key: the file name the command reads (trtllm.yaml)."""


def engine_config_map_name(fleet: str) -> str:
    return f"{fleet}-engine"


def mount_engine_config(pod: dict[str, Any], fleet: str, options: str) -> None:
    """The engine's options file (TensorRT-LLM's --config) from the fleet's ConfigMap, read-only at the path the
    command names (engine.TRTLLM_CONFIG)."""
    folder = TRTLLM_CONFIG.rsplit("/", 1)[0]
    pod["volumes"].append({"name": "engine-config", "config_map": {"name": engine_config_map_name(fleet)}})
    (server,) = pod["containers"]
    server["volume_mounts"].append({"name": "engine-config", "mount_path": folder, "read_only": True})


def pod_spec(spec: InferenceSpec, rp: RegionPlan, devices: Accelerators) -> dict[str, Any]:
    """Where and how a server pod runs: its identity, restricted security, nodes of the planned accelerator (their
    taint tolerated), a drain-long grace, spread over zones. The caller adds containers and volumes."""
    return {
        "service_account_name": spec.name,
        # No process in the pod calls the Kubernetes API; the weights' S3 credentials come through the token volume
        # the EKS Pod Identity (or IRSA) webhook projects, not the service account token.
        "automount_service_account_token": False,
        "security_context": {
            "run_as_non_root": True,
            "fs_group": RUN_AS,
            "seccomp_profile": {"type": "RuntimeDefault"},
        },
        "node_selector": dict(devices.node_selector),
        # Accelerator nodes are tainted with their resource's name (EKS: nvidia.com/gpu, aws.amazon.com/neuron).
        "tolerations": [device_toleration(devices.resource)],
        "termination_grace_period_seconds": grace_seconds(rp.drain_seconds),
        # Spread replicas over zones: losing one zone loses at most its share of the region.
        "topology_spread_constraints": [
            {
                "max_skew": 1,
                "topology_key": "topology.kubernetes.io/zone",
                "when_unsatisfiable": "ScheduleAnyway",
                "label_selector": {"match_labels": {"app.kubernetes.io/name": spec.name}},
            }
        ],
    }


def server_container(
    spec: InferenceSpec,
    rp: RegionPlan,
    devices: Accelerators,
    server_image: str,
    requests: dict[str, str],
    weights_gib: int,
    engine: Engine,
) -> dict[str, Any]:
    """vLLM on the synced weights: its accelerators, CPU and memory, the emptyDirs it writes as ephemeral storage,
    the API key from its Secret, probes sized by the cold start, and a drain before SIGTERM."""
    model, lb, kube = spec.model, spec.load_balancer, spec.kubernetes
    gpus = max(1, rp.accelerators_per_instance)
    # The emptyDirs on disk count against the node's disk: request them, so the scheduler places the pod where they
    # fit and the kubelet evicts only this pod if it outgrows them (Kubernetes docs, "Local ephemeral storage").
    disk = f"{weights_gib + CACHE_GIB + TMP_GIB}Gi"
    # The engine's key variable (engine-api-key refuses api_key auth for an engine without one).
    key_env = engine.api_key_env
    api_key = (
        [{"name": key_env, "value_from": {"secret_key_ref": {"name": kube.api_key_secret, "key": "api-key"}}}]
        if kube and kube.api_key_secret and spec.access.auth == "api_key" and key_env
        else []
    )
    return {
        "name": "server",
        "image": server_image,
        "env": CACHE_ENV + api_key,
        "security_context": restricted_context(),
        "args": engine_args(model, WEIGHTS_DIR, gpus, engine, spec.server_args, lb.server_port),
        "ports": [{"name": "http", "container_port": lb.server_port}],
        "resources": {
            "limits": {devices.resource: str(gpus), "memory": requests["memory"]},
            "requests": {devices.resource: str(gpus), **requests, "ephemeral-storage": disk},
        },
        "volume_mounts": [
            {"name": "weights", "mount_path": WEIGHTS_DIR, "read_only": True},
            {"name": "shm", "mount_path": "/dev/shm"},
            {"name": "cache", "mount_path": CACHE_DIR},
        ],
        **probes(spec, rp),
        # In-flight generations finish before SIGTERM, which vLLM answers by cancelling them.
        "lifecycle": {"pre_stop": {"exec": {"command": drain_command(lb.server_port, rp.drain_seconds, engine)}}},
    }


def probes(spec: InferenceSpec, rp: RegionPlan) -> dict[str, Any]:
    """Startup (the whole modelled cold start: weights arrive in the init container), readiness (the load
    balancer's own cadence) and liveness (a restart is a cold start: only after 10 missed minutes).
    Probe.timeoutSeconds defaults to 1 s (Kubernetes API core/v1): a saturated vLLM misses that and is pulled
    from the load balancer (readiness) or restarted (liveness) under the load that needs it most."""
    lb = spec.load_balancer
    probe = {"http_get": {"path": lb.health_check_path, "port": "http"}, "timeout_seconds": PROBE_TIMEOUT_SECONDS}
    return {
        "startup_probe": {
            **probe,
            "period_seconds": 10,
            "failure_threshold": startup_failure_threshold(rp.cold_start_seconds),
        },
        "readiness_probe": {
            **probe,
            "period_seconds": lb.health_check_interval_seconds,
            "failure_threshold": lb.unhealthy_threshold,
        },
        "liveness_probe": {
            **probe,
            "timeout_seconds": LIVENESS_TIMEOUT_SECONDS,
            "period_seconds": 60,
            "failure_threshold": 10,
        },
    }


def hpa_spec(spec: InferenceSpec, rp: RegionPlan, engine: Engine) -> dict[str, Any]:
    """The HPA on the engine's own external metric, which the cluster's prometheus-adapter serves from the engine's
    rule (external_metric.py; docs/inference.md lists each engine's). The spec requires the adapter to be named
    (kubernetes.external_metrics_adapter)."""
    a = spec.autoscaling
    assert spec.kubernetes is not None
    return {
        "scale_target_ref": {"api_version": "apps/v1", "kind": "Deployment", "name": spec.name},
        "min_replicas": rp.min_replicas,
        "max_replicas": rp.max_replicas,
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {
                        "name": external_metric(engine),
                        "selector": {"match_labels": {METRIC_LABEL: spec.name, "namespace": spec.kubernetes.namespace}},
                    },
                    "target": {"type": "AverageValue", "average_value": f"{a.target_queue_depth_per_replica:g}"},
                },
            }
        ],
        "behavior": {
            "scale_up": {
                "stabilization_window_seconds": 0,
                "policies": [{"type": "Pods", "value": 4, "period_seconds": a.scale_out_cooldown_seconds}],
            },
            "scale_down": {
                "stabilization_window_seconds": a.scale_in_cooldown_seconds,
                "policies": [{"type": "Pods", "value": 1, "period_seconds": 60}],
            },
        },
    }


POD_LABEL = "app.kubernetes.io/name"


def load_query(waiting_metric: str, namespace: str, name: str, running_metric: str) -> str:
    """Requests in flight (waiting + running, the engine's own series) over the fleet's pods, with the labels the
    PodMonitor gives every series: `namespace` (always) and app_kubernetes_io_name (podTargetLabels)."""
    selector = f'{{namespace="{namespace}",{METRIC_LABEL}="{name}"}}'
    return f"sum({waiting_metric}{selector}) + sum({running_metric}{selector})"


def waiting_metric(spec: InferenceSpec, engine: Engine) -> str:
    """The queue series the autoscaler counts: the spec's, else the engine's."""
    kube = spec.kubernetes
    assert kube is not None
    return kube.queue_metric or engine.waiting_metric


def pod_monitor_spec(spec: InferenceSpec, engine: Engine) -> dict[str, Any]:
    """Prometheus Operator PodMonitor (monitoring.coreos.com/v1) scraping the engine's metrics path (vLLM's and
    SGLang's /metrics, trtllm-serve's /prometheus/metrics) on the http port."""
    return {
        "selector": {"matchLabels": {POD_LABEL: spec.name}},
        "podTargetLabels": [POD_LABEL],
        "podMetricsEndpoints": [{"port": "http", "path": engine.metrics_path, "interval": "15s"}],
    }


def network_policy_spec(spec: InferenceSpec, cluster: ServingClusterComponents) -> dict[str, Any]:
    """Server pods take traffic on their server port only from the load balancer and the cluster's Prometheus, and
    reach DNS and HTTPS (registry, images) only. With ip targets and a TCP target group the NLB does not preserve
    client IPs (Elastic Load Balancing, "Client IP preservation": off by default for ip targets over TCP/TLS), so
    pods see traffic and health checks from the NLB's private addresses, inside the subnets the controller places
    it in (`aws_load_balancer_controller.subnet_cidrs`). Other pods are not admitted: with the VPC CNI they have
    addresses in the VPC, so a VPC-wide block would let them all in. The kubelet's probes come from the pod's own
    node, which a NetworkPolicy cannot block (Kubernetes docs, Network Policies: "What you can't do with network
    policies": access from the resident node)."""
    port = [{"protocol": "TCP", "port": spec.load_balancer.server_port}]
    monitoring = {"kubernetes.io/metadata.name": cluster.prometheus_operator.namespace}
    return {
        "pod_selector": {"match_labels": {POD_LABEL: spec.name}},
        "policy_types": ["Ingress", "Egress"],
        "ingress": [
            {
                "from": [{"ip_block": {"cidr": c}} for c in cluster.aws_load_balancer_controller.subnet_cidrs],
                "ports": port,
            },
            # The namespace label the API server sets on every namespace (Kubernetes docs, well-known labels).
            {"from": [{"namespace_selector": {"match_labels": monitoring}}], "ports": port},
        ],
        "egress": [
            {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"ports": [{"protocol": "TCP", "port": 443}]},
        ],
    }


PROMETHEUS_SERVICE = "prometheus-operated"
"""The governing Service the Prometheus Operator creates for every Prometheus it runs, port 9090 named web
(prometheus-operator, pkg/prometheus: governingServiceName): present whatever the Helm release is called, unlike
kube-prometheus-stack's own `<release>-kube-prometheus-prometheus`."""
PROMETHEUS_PORT = 9090
FALLBACK_FAILURES = 3
"""Failed Prometheus queries in a row (15 s apart) before KEDA holds the fallback replica count."""


def prometheus_address(spec: InferenceSpec, cluster: ServingClusterComponents) -> str:
    """The spec's prometheus_url, else the Prometheus the cluster declares (organization file)."""
    kube = spec.kubernetes
    assert kube is not None
    if kube.prometheus_url:
        return kube.prometheus_url
    namespace = cluster.prometheus_operator.namespace
    return f"http://{PROMETHEUS_SERVICE}.{namespace}.svc:{PROMETHEUS_PORT}"


def scaled_object_spec(
    spec: InferenceSpec, rp: RegionPlan, namespace: str, cluster: ServingClusterComponents, engine: Engine
) -> dict[str, Any]:
    """KEDA ScaledObject spec (CRD fields are camelCase: it is passed through untranslated). When Prometheus stops
    answering, KEDA holds `fallback.replicas` (KEDA docs, ScaledObject spec, fallback: for scalers of metric type
    AverageValue, the prometheus scaler's default): the replicas the region's planned peak needs, not whatever the
    count was, so an outage of the monitoring stack never scales the fleet in under load."""
    a, kube = spec.autoscaling, spec.kubernetes
    assert kube is not None
    query = load_query(waiting_metric(spec, engine), namespace, spec.name, engine.running_metric)
    return {
        "scaleTargetRef": {"name": spec.name},
        "minReplicaCount": rp.min_replicas,
        "maxReplicaCount": rp.max_replicas,
        "fallback": {"failureThreshold": FALLBACK_FAILURES, "replicas": rp.planned_replicas},
        "pollingInterval": 15,
        "cooldownPeriod": a.scale_in_cooldown_seconds,
        "advanced": {
            "horizontalPodAutoscalerConfig": {
                "behavior": {
                    "scaleDown": {
                        "stabilizationWindowSeconds": a.scale_in_cooldown_seconds,
                        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
                    }
                }
            }
        },
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {
                    "serverAddress": prometheus_address(spec, cluster),
                    "query": query,
                    "threshold": f"{a.target_queue_depth_per_replica:g}",
                },
            }
        ],
    }


@dataclass(frozen=True)
class KubernetesRegionArgs:
    spec: InferenceSpec
    fleet_region: FleetRegion
    rp: RegionPlan
    registry: Registry
    devices: Accelerators
    stack_tags: dict[str, str]
    account_id: str
    node: tuple[int, int]
    """The node type's vCPUs and memory (GiB): what a server pod requests."""
    weights_bytes: int
    cluster: ServingClusterComponents
    """What the region's cluster runs."""
    pools: list[NodePoolPlan]
    engine: Engine
    """The model server (the catalog's engines.yaml row for spec.engine)."""
    alerts: Alerts | None = None
    release_wait_seconds: int = 0
    """The longest a new release may take to reach the region's bucket (plan.rollout's held_seconds)."""


SERVICE_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"


def service_annotations(args: KubernetesRegionArgs) -> dict[str, str]:
    """What the AWS Load Balancer Controller makes of the Service: an NLB with ip targets, in the fleet's scheme,
    health checked on the server's path over HTTP (healthcheck-protocol defaults to TCP), a deregistration delay as
    long as a drain (0-3600 s), TLS with the region's certificate, and names the stack finds it by."""
    spec, rp = args.spec, args.rp
    annotations = {
        SERVICE_ANNOTATION + "type": "external",
        SERVICE_ANNOTATION + "nlb-target-type": "ip",
        SERVICE_ANNOTATION + "scheme": spec.access.scheme,
        SERVICE_ANNOTATION + "healthcheck-protocol": "HTTP",
        SERVICE_ANNOTATION + "healthcheck-port": "traffic-port",
        SERVICE_ANNOTATION + "healthcheck-path": spec.load_balancer.health_check_path,
        SERVICE_ANNOTATION + "target-group-attributes": (
            f"deregistration_delay.timeout_seconds={min(3600, rp.drain_seconds)}"
        ),
        **findable_by_stack(spec.name),
    }
    if args.fleet_region.certificate_arn:
        annotations |= {
            SERVICE_ANNOTATION + "ssl-cert": args.fleet_region.certificate_arn,
            SERVICE_ANNOTATION + "ssl-ports": "443",
        }
    return annotations


class KubernetesRegion(pulumi.ComponentResource):
    service: k8s.core.v1.Service
    load_balancer: ServiceLoadBalancer

    def __init__(
        self,
        name: str,
        args: KubernetesRegionArgs,
        provider: k8s.Provider,
        aws_provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`aws_provider`: the fleet's account in this region, where the controller creates the NLB."""
        super().__init__(REGION_TYPE, name, None, opts)
        spec = args.spec
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        aws_opts = pulumi.ResourceOptions(parent=self, provider=aws_provider)
        server = deployment_spec(
            spec,
            args.rp,
            args.registry.replica_bucket(args.rp.region),
            args.registry.model_prefix,
            args.devices,
            labels(spec, args.stack_tags),
            args.engine,
            args.node,
            args.weights_bytes,
            self._mirror(name, args, aws_opts),
        )
        meta = self._namespace(name, args, server, aws_provider, o)
        self._engine_config(name, args, meta, o)
        deployment = k8s.apps.v1.Deployment(
            f"{name}-server",
            metadata=meta,
            spec=server,
            opts=pulumi.ResourceOptions.merge(
                o,
                pulumi.ResourceOptions(
                    custom_timeouts=rollout_timeouts(
                        args.rp.cold_start_seconds, args.rp.max_replicas, args.release_wait_seconds
                    )
                ),
            ),
        )
        self._monitoring(name, args, meta, o)
        self.service = self._service(name, args, meta, o, aws_opts)
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata=meta,
            spec={"max_unavailable": 1, "selector": {"match_labels": {"app.kubernetes.io/name": spec.name}}},
            opts=o,
        )
        self._gpu_nodes(name, args, labels(spec, args.stack_tags), o)
        self._autoscaler(
            name, args, meta, pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[deployment]))
        )
        self._alarms(name, args, aws_provider, aws_opts)
        self.register_outputs({"service": self.service.metadata["name"]})

    def _mirror(self, name: str, args: KubernetesRegionArgs, aws_opts: pulumi.ResourceOptions) -> str | None:
        """image_source ecr_mirror: the fleet's repository in this region (the nodes pull from the fleet's account,
        with their role's ECR read access, the cluster's); None: the image's own registry."""
        spec = args.spec
        if spec.image_source != "ecr_mirror":
            return None
        mirror_repository(name, spec.name, spec.server_image, args.stack_tags, aws_opts)
        return mirrored_image(args.account_id, args.rp.region, spec.name, spec.server_image).image

    def _namespace(
        self,
        name: str,
        args: KubernetesRegionArgs,
        server: dict[str, Any],
        aws_provider: pulumi.ProviderResource,
        o: pulumi.ResourceOptions,
    ) -> dict[str, Any]:
        """The namespace (at the strictest Pod Security level the pods meet), deny-by-default traffic, and the
        service account with the weights-reading role. Returns the objects' metadata.

        Pods created after the Service get the controller's readiness gate: a rollout stops an old pod only once
        the new one is healthy in the NLB's target group (AWS Load Balancer Controller docs, "Pod readiness gate":
        label the namespace; ip targets only). The Deployment does not wait for the Service (Pulumi waits for a
        Service's endpoints), so the first pods may start without it: they take no traffic yet."""
        spec = args.spec
        kube = spec.kubernetes
        assert kube is not None
        pod_labels = labels(spec, args.stack_tags)
        enforce = pod_security.strictest_for([server["template"]["spec"]])
        namespace_labels = {**pod_labels, **pod_security.labels(enforce), READINESS_GATE_LABEL: "enabled"}
        namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": kube.namespace, "labels": namespace_labels}, opts=o
        )
        meta = {"name": spec.name, "namespace": namespace.metadata["name"], "labels": pod_labels}
        k8s.networking.v1.NetworkPolicy(
            f"{name}-default-deny",
            metadata={**meta, "name": "default-deny"},
            spec={"pod_selector": {}, "policy_types": ["Ingress", "Egress"]},
            opts=o,
        )
        annotations = self._workload_identity(name, spec, args.cluster, args.stack_tags, aws_provider)
        k8s.core.v1.ServiceAccount(f"{name}-sa", metadata={**meta, "annotations": annotations}, opts=o)
        return meta

    @staticmethod
    def _engine_config(name: str, args: KubernetesRegionArgs, meta: dict[str, Any], o: pulumi.ResourceOptions) -> None:
        """The ConfigMap holding the engine's options file, for engines that read one (TensorRT-LLM)."""
        options = engine_config(args.spec.model, args.spec.engine)
        if options is not None:
            k8s.core.v1.ConfigMap(
                f"{name}-engine-config",
                metadata={**meta, "name": engine_config_map_name(args.spec.name)},
                data={ENGINE_CONFIG_KEY: options},
                opts=o,
            )

    @staticmethod
    def _monitoring(name: str, args: KubernetesRegionArgs, meta: dict[str, Any], o: pulumi.ResourceOptions) -> None:
        """The PodMonitor the cluster's Prometheus selects (its release label), and the pods' network policy."""
        spec, cluster = args.spec, args.cluster
        k8s.apiextensions.CustomResource(
            f"{name}-metrics",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={**meta, "labels": {**meta["labels"], "release": cluster.prometheus_operator.release}},
            spec=pod_monitor_spec(spec, args.engine),
            opts=o,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol", metadata=meta, spec=network_policy_spec(spec, cluster), opts=o
        )

    def _service(
        self,
        name: str,
        args: KubernetesRegionArgs,
        meta: dict[str, Any],
        o: pulumi.ResourceOptions,
        aws_opts: pulumi.ResourceOptions,
    ) -> k8s.core.v1.Service:
        """The LoadBalancer Service the controller makes the region's NLB from; with TLS, its access logs go to a
        bucket of the fleet's account, whose policy ELB checks when logging is turned on (so it comes first)."""
        spec, rp = args.spec, args.rp
        annotations = service_annotations(args)
        service_opts = o
        if args.fleet_region.certificate_arn:
            bucket = log_bucket_name(spec.name, args.account_id, rp.region)
            _, log_policy = access_log_bucket(
                name, bucket, args.account_id, rp.region, False, aws_opts, spec.log_retention_days
            )
            annotations |= access_log_annotations(bucket, ACCESS_LOG_PREFIX)
            service_opts = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[log_policy]))
        return k8s.core.v1.Service(
            f"{name}-service",
            metadata={**meta, "annotations": annotations},
            spec={
                "type": "LoadBalancer",
                "selector": {"app.kubernetes.io/name": spec.name},
                "ports": [{"name": "https", "port": 443, "target_port": "http", "protocol": "TCP"}],
            },
            opts=service_opts,
        )

    @staticmethod
    def _autoscaler(name: str, args: KubernetesRegionArgs, meta: dict[str, Any], o: pulumi.ResourceOptions) -> None:
        """KEDA's ScaledObject on the Prometheus query, or an autoscaling/v2 HPA on the external metric; after the
        Deployment they scale."""
        spec, rp = args.spec, args.rp
        kube = spec.kubernetes
        assert kube is not None
        if kube.autoscaler == "keda":
            k8s.apiextensions.CustomResource(
                f"{name}-scaler",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                metadata=meta,
                spec=scaled_object_spec(spec, rp, kube.namespace, args.cluster, args.engine),
                opts=o,
            )
        else:
            k8s.autoscaling.v2.HorizontalPodAutoscaler(
                f"{name}-hpa", metadata=meta, spec=hpa_spec(spec, rp, args.engine), opts=o
            )

    def _alarms(
        self,
        name: str,
        args: KubernetesRegionArgs,
        aws_provider: pulumi.ProviderResource,
        aws_opts: pulumi.ResourceOptions,
    ) -> None:
        """The controller's NLB read back, its no-healthy-replica alarm (internal: Route 53 fails over on it) and its
        unhealthy-replica SLO alarm, both paging the region's alert topic when the account has `alerts`."""
        spec = args.spec
        topic = alert_topic(f"{name}-alerts", args.account_id, args.alerts, aws_opts).arn if args.alerts else None
        self.load_balancer = service_load_balancer(
            name, spec.name, self.service, spec.access.scheme == "internal", aws_provider, self, topic
        )
        slo_alarms(
            SloArgs(
                fleet=spec.name,
                region=args.rp.region,
                alb=False,
                load_balancer_suffix=self.load_balancer.load_balancer_suffix,
                target_group_suffix=self.load_balancer.target_group_suffix,
                latency_target_seconds=spec.requests.latency_target_seconds,
                error_rate_percent=spec.slo.error_rate_percent,
                evaluation_minutes=spec.slo.evaluation_minutes,
                topic_arn=topic,
            ),
            aws_opts,
        )

    def _workload_identity(
        self,
        name: str,
        spec: InferenceSpec,
        cluster: ServingClusterComponents,
        tags: dict[str, str],
        aws_provider: pulumi.ProviderResource,
    ) -> dict[str, str]:
        """How the server pods get the weights-reading role, as the cluster hands pods roles: IRSA reads the service
        account's `eks.amazonaws.com/role-arn` annotation (EKS user guide, "IAM roles for service accounts"); EKS
        Pod Identity needs an association of the cluster, namespace and service account with the role (EKS API
        CreatePodIdentityAssociation), made here in the fleet's account and region. Returns the annotations."""
        kube = spec.kubernetes
        assert kube is not None
        role = kube.service_account_role_arn
        identity = cluster.workload_identity
        if role is None:
            return {}
        if identity is not None and identity.kind == "pod_identity":
            assert identity.eks_cluster_name, "cluster-components-missing refuses pod_identity without the cluster"
            aws.eks.PodIdentityAssociation(
                f"{name}-pod-identity",
                cluster_name=identity.eks_cluster_name,
                namespace=kube.namespace,
                service_account=spec.name,
                role_arn=role,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, provider=aws_provider),
            )
            return {}
        return {"eks.amazonaws.com/role-arn": role}

    @staticmethod
    def _gpu_nodes(
        name: str, args: KubernetesRegionArgs, object_labels: dict[str, str], o: pulumi.ResourceOptions
    ) -> None:
        """Karpenter's node class and pools (cluster-scoped objects, named after the fleet and labelled as its other
        objects)."""
        spec, devices = args.spec, args.devices
        karpenter = args.cluster.karpenter
        assert karpenter is not None, "cluster-components-missing refuses a cluster without Karpenter"
        node_class = k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=NODE_CLASS_API,
            kind="EC2NodeClass",
            metadata={"name": node_class_name(spec), "labels": object_labels},
            spec=node_class_spec(karpenter, root_volume_gib(args.weights_bytes), args.stack_tags),
            opts=o,
        )
        after_class = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[node_class]))
        taint = device_toleration(devices.resource)
        for pool in args.pools:
            k8s.apiextensions.CustomResource(
                f"{name}-{pool.name.removeprefix(spec.name + '-')}-nodes",
                api_version=NODE_POOL_API,
                kind="NodePool",
                metadata={"name": pool.name, "labels": object_labels},
                spec=node_pool_spec(
                    spec,
                    pool.purchase,
                    pool.instance_types,
                    pool.limits,
                    taint,
                    devices.resource,
                    devices.node_selector,
                    region=pool.region,
                ),
                opts=after_class,
            )


def cluster_components(args: KubernetesFleetArgs, region: str) -> ServingClusterComponents:
    found = args.clusters.get(region)
    assert found is not None, f"{region}: cluster-components-missing refuses a cluster that declares no components"
    return found


def region_args(args: KubernetesFleetArgs, fleet_region: FleetRegion, rp: RegionPlan) -> KubernetesRegionArgs:
    """One region's inputs: its accelerators' resource and node selector, and the node type's size, from the
    catalog; the cluster's components and the region's node pools."""
    spec = args.spec
    assert spec.kubernetes is not None
    assert rp.instance_type is not None, "the serving validators refuse a region without an instance type"
    info = args.catalog.instance(rp.instance_type)
    return KubernetesRegionArgs(
        spec=spec,
        fleet_region=fleet_region,
        rp=rp,
        registry=args.registry,
        devices=accelerators(args.catalog, rp.instance_type, spec.kubernetes.gpu_product_label),
        stack_tags=args.tags,
        account_id=args.account_id,
        node=(info.vcpu, info.memory_gib) if info else (4, 16),
        weights_bytes=args.plan.memory.weights_bytes,
        cluster=cluster_components(args, rp.region),
        pools=node_pools(spec, rp, args.catalog, args.plan.quotas),
        engine=args.catalog.engine(spec.engine),
        alerts=args.alerts,
        release_wait_seconds=next((s.held_seconds for s in args.plan.rollout if s.region == rp.region), 0),
    )


def cluster_provider(spec: InferenceSpec, region: str, o: pulumi.ResourceOptions) -> k8s.Provider:
    """The region's cluster, from the kubeconfig in the stack's Pulumi config (a secret), server-side apply."""
    assert spec.kubernetes is not None
    namespace, _, short = spec.kubernetes.kubeconfig_keys[region].rpartition(":")
    return k8s.Provider(
        f"k8s-{region}",
        kubeconfig=pulumi.Config(namespace or None).require_secret(short),
        enable_server_side_apply=True,
        opts=o,
    )


def routing_args(spec: InferenceSpec, regions: Mapping[str, KubernetesRegion]) -> RoutingArgs:
    """Latency records over the regions' NLBs, each failing over on its alarm when it has one (internal); an
    internal fleet's records in a private zone associated with each cluster's VPC (the one the controller used) and
    the spec's client VPCs."""
    routing = spec.global_routing
    return RoutingArgs(
        kind="route53_latency",
        domain_name=routing.domain_name,
        hosted_zone_id=routing.hosted_zone_id,
        health_check_path=spec.load_balancer.health_check_path,
        targets=[
            RegionalTarget(
                region,
                r.load_balancer.dns_name,
                r.load_balancer.zone_id,
                r.load_balancer.arn,
                r.load_balancer.health_alarm.name if r.load_balancer.health_alarm else None,
            )
            for region, r in regions.items()
        ],
        private_vpcs=zone_vpcs(spec, {region: r.load_balancer.vpc_id for region, r in regions.items()}),
    )


class KubernetesFleet(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: KubernetesFleetArgs,
        aws_providers: Mapping[str, pulumi.ProviderResource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`aws_providers`: the fleet's account per region (the load balancers, their alarms; Route 53 through
        the first region's)."""
        super().__init__(FLEET_TYPE, name, None, opts)
        spec, plan = args.spec, args.plan
        here = pulumi.ResourceOptions(parent=self)
        regions = {
            rp.region: KubernetesRegion(
                f"{name}-{rp.region}",
                region_args(args, fleet_region, rp),
                cluster_provider(spec, rp.region, here),
                aws_providers[rp.region],
                here,
            )
            for fleet_region, rp in zip(spec.regions, plan.regions, strict=True)
        }
        GlobalRouting(f"{name}-routing", routing_args(spec, regions), aws_providers[plan.regions[0].region], here)
        self.register_outputs({"regions": sorted(regions)})


__all__ = [
    "FLEET_TYPE",
    "REGION_TYPE",
    "Accelerators",
    "KubernetesFleet",
    "KubernetesFleetArgs",
    "KubernetesRegion",
    "KubernetesRegionArgs",
    "accelerators",
    "cluster_provider",
    "deployment_spec",
    "hpa_spec",
    "image_ref",
    "load_query",
    "network_policy_spec",
    "pod_monitor_spec",
    "pod_requests",
    "pod_spec",
    "probes",
    "prometheus_address",
    "region_args",
    "restricted_context",
    "rollout_timeouts",
    "routing_args",
    "scaled_object_spec",
    "server_container",
    "service_annotations",
    "startup_failure_threshold",
]
