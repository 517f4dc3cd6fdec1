"""What a Kubernetes serving stack needs from each region's cluster: the controllers, operators and Secrets the
cluster runs for every fleet, declared in the organization file (`clusters.<name>.components`), checked here,
never installed by a stack (a cluster has one Load Balancer Controller, one Prometheus Operator, one KEDA).

The custom resources the stack creates are served by those components: each kind is tied to the component
serving it and the oldest release whose CRD the stack's objects are checked against (tests/components, reading
../shared/upstream and the Karpenter CRDs cited in components/inference/nodes.py). An older release may work; it
is not verified, so it is refused, as the training side's site components are (plan/site.py)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.plan.site import SiteProblem
from gpuinfra.spec import InferenceSpec, Organization
from gpuinfra.spec.org import KubernetesCluster, ServingClusterComponents, release_tuple


@dataclass(frozen=True)
class ServedKind:
    """A custom resource kind the stack creates, and the cluster component (with its oldest verified release)
    whose CRDs serve it."""

    api_version: str
    kind: str
    component: str
    minimum: str


KEDA_SCALED_OBJECT = ServedKind("keda.sh/v1alpha1", "ScaledObject", "keda", "2.17.2")
POD_MONITOR = ServedKind("monitoring.coreos.com/v1", "PodMonitor", "prometheus_operator", "0.93.0")
NODE_POOL = ServedKind("karpenter.sh/v1", "NodePool", "karpenter", "1.14.1")
EC2_NODE_CLASS = ServedKind("karpenter.k8s.aws/v1", "EC2NodeClass", "karpenter", "1.14.1")
SERVED_KINDS = (KEDA_SCALED_OBJECT, POD_MONITOR, NODE_POOL, EC2_NODE_CLASS)
LOAD_BALANCER_CONTROLLER_MINIMUM = "2.3.0"
"""The first release documenting every Service annotation the fleet sets, `aws-load-balancer-attributes` (access
logs) being the newest (kubernetes-sigs/aws-load-balancer-controller docs/guide/service/annotations.md at v2.3.0,
83a8c40061304b67fa19d344e159f43c0b3b7e64; absent at v2.2.0)."""
GPU_FEATURE_DISCOVERY_MINIMUM = "0.17.4"
"""The nvidia-device-plugin chart the EKS user guide installs with gfd.enabled=true (ml-eks-k8s-device-plugin)."""
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""The node label GPU feature discovery sets and the fleet's node selector reads."""


def cluster_for(org: Organization, kubeconfig_key: str) -> tuple[str, KubernetesCluster] | None:
    """The registered cluster a region's kubeconfig key reaches (None: unregistered)."""
    return next(((n, c) for n, c in org.clusters.items() if c.kubeconfig_key == kubeconfig_key), None)


def region_clusters(spec: InferenceSpec, org: Organization) -> dict[str, ServingClusterComponents]:
    """Per fleet region, the components its registered cluster declares (regions whose cluster declares none are
    absent: cluster-components-missing refuses them)."""
    kube = spec.kubernetes
    out: dict[str, ServingClusterComponents] = {}
    for region, key in (kube.kubeconfig_keys if kube else {}).items():
        found = cluster_for(org, key)
        if found is not None and found[1].components is not None:
            out[region] = found[1].components
    return out


def kinds_created(spec: InferenceSpec) -> list[ServedKind]:
    """The custom resource kinds a Kubernetes fleet creates in each cluster."""
    kube = spec.kubernetes
    assert kube is not None
    return [POD_MONITOR, *([KEDA_SCALED_OBJECT] if kube.autoscaler == "keda" else []), NODE_POOL, EC2_NODE_CLASS]


def cluster_problems(spec: InferenceSpec, org: Organization, node_label: str | None) -> list[SiteProblem]:
    """Every way the declared components of the fleet's clusters fall short (empty: none). `node_label`: the
    label the pods select nodes by (the catalog's, for the fleet's instance type)."""
    kube = spec.kubernetes
    if kube is None:
        return []
    out: list[SiteProblem] = []
    for region, key in kube.kubeconfig_keys.items():
        found = cluster_for(org, key)
        if found is None:
            out.append(
                SiteProblem(
                    f"{region}'s kubeconfig key {key} reaches no cluster registered in the organization file: what "
                    "it runs cannot be checked (fail closed)",
                    "clusters",
                    "register the cluster in the organization file: "
                    f"`clusters: {{serve-{region}: {{purpose: inference, kubeconfig_key: '{key}'}}}}`, with its "
                    "components",
                )
            )
            continue
        name, cluster = found
        if cluster.components is None:
            out.append(_nothing_declared(name, region, spec, node_label))
            continue
        out += [
            SiteProblem(f"cluster {name} ({region}): {p.message}", f"clusters.{name}.components.{p.field}", p.fix)
            for p in _component_problems(spec, cluster.components, node_label)
        ]
    return out


def _needed(spec: InferenceSpec, node_label: str | None) -> list[str]:
    kube = spec.kubernetes
    assert kube is not None
    return [
        f"aws_load_balancer_controller (>= v{LOAD_BALANCER_CONTROLLER_MINIMUM}, with the NLB subnets' CIDRs)",
        f"prometheus_operator (>= v{POD_MONITOR.minimum}, with its release label)",
        *([f"keda (>= {KEDA_SCALED_OBJECT.minimum})"] if kube.autoscaler == "keda" else []),
        *([f"gpu_feature_discovery (>= {GPU_FEATURE_DISCOVERY_MINIMUM})"] if node_label == GPU_PRODUCT_LABEL else []),
        f"karpenter (>= {NODE_POOL.minimum}, with its node role and discovery tag)",
        *(["workload_identity"] if kube.service_account_role_arn else []),
        *([f"secrets: [{kube.namespace}/{kube.api_key_secret}]"] if _api_key(spec) else []),
    ]


def _api_key(spec: InferenceSpec) -> str | None:
    kube = spec.kubernetes
    if kube is None or spec.access.auth != "api_key" or not kube.api_key_secret:
        return None
    return f"{kube.namespace}/{kube.api_key_secret}"


def _nothing_declared(name: str, region: str, spec: InferenceSpec, node_label: str | None) -> SiteProblem:
    return SiteProblem(
        f"cluster {name} ({region}) declares no serving components: the stack creates a LoadBalancer Service, "
        "a PodMonitor, an autoscaler and a NodePool but installs none of the controllers that act on them "
        "(on a cluster missing a CRD, `pulumi up` fails)",
        f"clusters.{name}.components",
        f"install and declare under `clusters.{name}.components`: {'; '.join(_needed(spec, node_label))} "
        '(docs/inference.md, "Cluster prerequisites")',
    )


def _too_old(component: str, declared: str, minimum: str) -> list[SiteProblem]:
    if release_tuple(declared) >= release_tuple(minimum):
        return []
    return [
        SiteProblem(
            f"its {component} {declared} is older than {minimum}, the oldest release the stack's objects are "
            "verified against",
            f"{component}.version",
            f"upgrade the cluster's {component} to {minimum} or newer, then write `version: '{minimum}'` under "
            f"`components.{component}`",
        )
    ]


def _absent(component: str, why: str, fix: str) -> SiteProblem:
    return SiteProblem(f"no {component} is declared: {why}", component, fix)


def _component_problems(
    spec: InferenceSpec, found: ServingClusterComponents, node_label: str | None
) -> list[SiteProblem]:
    kube = spec.kubernetes
    assert kube is not None
    out = _too_old(
        "aws_load_balancer_controller", found.aws_load_balancer_controller.version, LOAD_BALANCER_CONTROLLER_MINIMUM
    )
    out += _served_kinds(spec, found)
    if kube.prometheus_release is not None and found.prometheus_operator.release != kube.prometheus_release:
        out.append(
            SiteProblem(
                f"its Prometheus selects PodMonitors labelled release={found.prometheus_operator.release}; the "
                f"fleet labels its PodMonitor release={kube.prometheus_release}, which is never scraped (no queue "
                "metric: the autoscaler never scales out)",
                "prometheus_operator.release",
                "remove `kubernetes.prometheus_release` from the stack (the cluster's is used), or write "
                f"`prometheus_release: {found.prometheus_operator.release}` under kubernetes",
            )
        )
    if node_label == GPU_PRODUCT_LABEL:
        gfd = found.gpu_feature_discovery
        out += (
            _too_old("gpu_feature_discovery", gfd.version, GPU_FEATURE_DISCOVERY_MINIMUM)
            if gfd
            else [
                _absent(
                    "gpu_feature_discovery",
                    f"the pods select nodes by {GPU_PRODUCT_LABEL}, which only GPU feature discovery sets: they "
                    "stay Pending",
                    f"install nvidia-device-plugin (>= {GPU_FEATURE_DISCOVERY_MINIMUM}) with gfd.enabled=true and "
                    f"write `gpu_feature_discovery: {{version: '{GPU_FEATURE_DISCOVERY_MINIMUM}'}}` under components",
                )
            ]
        )
    out += _identity_problems(spec, found)
    secret = _api_key(spec)
    if secret and secret not in found.secrets:
        out.append(
            _absent(
                f"Secret {secret}",
                "the server reads its API key from it; without it the pods never start",
                f"create {secret} (key api-key, e.g. synced from Secrets Manager) and add it to `components.secrets`",
            )
        )
    return out


def _served_kinds(spec: InferenceSpec, found: ServingClusterComponents) -> list[SiteProblem]:
    """Each custom resource kind the stack creates needs its serving component at the verified release."""
    out: list[SiteProblem] = []
    for component in dict.fromkeys(k.component for k in kinds_created(spec)):
        kinds = [k for k in kinds_created(spec) if k.component == component]
        declared = getattr(found, component)
        names = ", ".join(f"{k.api_version} {k.kind}" for k in kinds)
        if declared is None:
            out.append(
                _absent(
                    component,
                    f"the stack creates {names}, whose CRDs it installs (on a cluster without them `pulumi up` fails)",
                    f"install {component} (>= {kinds[0].minimum}) in the cluster and write `{component}: {{version: "
                    f"'{kinds[0].minimum}'}}` under components",
                )
            )
        else:
            out += _too_old(component, declared.version, kinds[0].minimum)
    return out


def _identity_problems(spec: InferenceSpec, found: ServingClusterComponents) -> list[SiteProblem]:
    kube = spec.kubernetes
    assert kube is not None
    role = kube.service_account_role_arn
    if role is None:
        return []
    identity = found.workload_identity
    subject = f"system:serviceaccount:{kube.namespace}:{spec.name}"
    if identity is None:
        return [
            _absent(
                "workload_identity",
                f"the fleet's pods assume {role} to read weights; nothing says how the cluster hands pods roles",
                "write `workload_identity: {kind: irsa, oidc_provider_arn: <the cluster's OIDC provider ARN>}` under "
                f"components (the role trusts it for {subject}), or `kind: pod_identity` with `eks_cluster_name`",
            )
        ]
    if identity.kind == "pod_identity" and identity.eks_cluster_name is None:
        return [
            _absent(
                "workload_identity.eks_cluster_name",
                "the stack associates the fleet's service account with its role through EKS Pod Identity, which "
                "names the cluster",
                "write `eks_cluster_name: <the EKS cluster's name>` under workload_identity; the role trusts "
                "pods.eks.amazonaws.com (sts:AssumeRole, "
                f"sts:TagSession) for {subject}",
            )
        ]
    if identity.kind == "irsa" and identity.oidc_provider_arn is None:
        return [
            _absent(
                "workload_identity.oidc_provider_arn",
                "IRSA needs the cluster's IAM OIDC provider",
                "write `oidc_provider_arn: arn:aws:iam::<account>:oidc-provider/<issuer>` under workload_identity; "
                f"the role trusts it with sub {subject} and aud sts.amazonaws.com",
            )
        ]
    provider_account = identity.oidc_provider_arn.split(":")[4] if identity.oidc_provider_arn else None
    if provider_account and provider_account != role.split(":")[4]:
        return [
            SiteProblem(
                f"the role {role} and the cluster's OIDC provider are in different accounts; a role can trust only "
                "an OIDC provider of its own account (IAM, 'Create an IAM OIDC provider for your cluster')",
                "workload_identity.oidc_provider_arn",
                f"create the cluster's OIDC provider in account {role.split(':')[4]} and write its ARN in "
                "`workload_identity.oidc_provider_arn`, or name a role of the provider's account in "
                "`kubernetes.service_account_role_arn`",
            )
        ]
    return []


__all__ = [
    "EC2_NODE_CLASS",
    "GPU_PRODUCT_LABEL",
    "KEDA_SCALED_OBJECT",
    "NODE_POOL",
    "POD_MONITOR",
    "SERVED_KINDS",
    "ServedKind",
    "cluster_for",
    "cluster_problems",
    "kinds_created",
    "region_clusters",
]
