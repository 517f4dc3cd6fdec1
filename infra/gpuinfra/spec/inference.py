"""The inference fleet spec (``gpuinfra:inference``): latency-bound, independent replicas near users."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuinfra.spec.base import (
    AccountName,
    FlowLogDestination,
    InstanceTypeName,
    Invalid,
    K8sName,
    LogRetentionDays,
    Name,
    Region,
    RuleId,
    SpecModel,
    Tags,
    VpcCidr,
    Zone,
    updates,
    zone_problem,
)
from gpuinfra.spec.target import Target
from gpuinfra.spec.words import K8sLabelValue, KeyPrefix, PromMetricName

DEFAULT_SERVING_AMI = (
    "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
)
DEFAULT_VPC_SECOND_OCTET = 64
"""Default VPCs are 10.64.0.0/16, 10.65.0.0/16, ... by region order (regions[].vpc_cidr)."""
ServingPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
ServingEngine = Literal["vllm", "tensorrt-llm", "sglang"]
"""The model servers a fleet can run (catalog engines.yaml: each one's image, launch, health path and metrics)."""
AcceleratorName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9-]*$"),
    Field(description="An accelerator name of the catalog (`gpuinfra catalog` lists them), e.g. L40S, RTX-PRO-6000."),
]
"""Checked against the catalog when the stack is loaded (load.reference_problems): the names are catalog data."""
_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?"
_PATH = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_REFERENCE = (
    rf"^(?:{_DOMAIN}/)?{_PATH}(?:/{_PATH})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?$"
)
"""A Docker image reference, per the grammar of distribution/reference (reference.go): it reaches a root shell
script, so nothing else is accepted."""
ImageReference = Annotated[str, StringConstraints(max_length=255, pattern=IMAGE_REFERENCE)]


class KvCache(SpecModel):
    """Shape of the attention key/value cache, which grows with every token in flight."""

    layers: Annotated[int, Field(ge=1, le=1024)]
    """Transformer layers, each holding a KV cache (num_hidden_layers in the model's config.json)."""
    kv_heads: Annotated[int, Field(ge=1, le=1024)]
    """Key/value heads per layer (num_key_value_heads; fewer than the attention heads with grouped-query attention)."""
    head_dim: Annotated[int, Field(ge=1, le=4096)]
    """Dimension of one attention head (head_dim, else hidden_size / num_attention_heads)."""
    precision: ServingPrecision | None = None
    """Cache element precision; default: the serving precision (int8/int4 weights keep an fp16 cache)."""


LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The --max-lora-rank values vLLM accepts (vllm/config/lora.py MaxLoRARanks at the pinned image)."""


class ServedAdapter(SpecModel):
    """A LoRA adapter of the served model, a registry entry (e.g. written by a gpuinfra:finetune run)."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    """The name clients ask for in the request's `model` field (vLLM --lora-modules name=path)."""
    weights_prefix: KeyPrefix
    """Path of the adapter under the registry's model prefix, with its manifest.json, e.g. adapters/support/v2/."""
    rank: Annotated[int, Field(ge=1, le=512)]
    """The adapter's LoRA rank (adapter_config.json `r`): the server's --max-lora-rank covers the largest."""
    parameters_million: Annotated[float, Field(gt=0, le=100_000)]
    """Trainable parameters of the adapter, in millions: with the rank, the GPU memory of one adapter slot."""
    base_model: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """The model the adapter was trained on (a fine-tuning run's base_model.name): it must be the served model's
    name (adapter-on-another-base), since a LoRA adapter's matrices fit only the layers of its own base."""


class ServedModel(SpecModel):
    """The model being served."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """A name for the model, e.g. llama-3.1-8b-instruct."""
    parameters_billion: Annotated[float, Field(gt=0, le=100_000)]
    """Parameters, in billions: with the precision, the weights' size in memory (all experts of a mixture)."""
    active_parameters_billion: Annotated[float, Field(gt=0, le=100_000)] | None = None
    """Mixture of experts: parameters each token passes through, the FLOPs of prefill and decode (2 x active a
    token); the weights in memory stay all of them. Default: all parameters (dense)."""
    precision: ServingPrecision = "bf16"
    """Precision of the served weights: bytes per parameter, and the memory the roofline reads per decode step."""
    context_length_tokens: Annotated[int, Field(ge=1, le=10_000_000)]
    """Longest context (prompt plus output) a sequence may use, in tokens: sizes its KV cache."""
    kv_cache: KvCache
    max_concurrent_sequences: Annotated[int, Field(ge=1, le=4096)] = 8
    """Sequences one replica serves at once, each at full context length."""
    weights_prefix: KeyPrefix
    """Path of the weights under the registry's model prefix, e.g. llama-3.1-8b/v3/."""
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] = 0.9
    """Share of accelerator memory the server may use (vLLM's gpu_memory_utilization)."""
    attention_heads: Annotated[int, Field(ge=1, le=4096)] | None = None
    """Query attention heads (config.json num_attention_heads): tensor parallelism must divide them."""
    quantization: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]{2,32}$")] | None = None
    """The checkpoint's quantization method as vLLM names it (--quantization: compressed-tensors, awq,
    gptq, ...); it must match the checkpoint's config.json. Default: fp8 for precision fp8, none otherwise."""
    adapters: Annotated[list[ServedAdapter], Field(max_length=256)] = []
    """LoRA adapters served beside the base from the same replicas (vLLM --enable-lora): adding one rolls the
    fleet's configuration, it is not a new fleet."""
    max_loras: Annotated[int, Field(ge=1, le=256)] | None = None
    """Adapters one batch may mix (vLLM --max-loras: GPU slots); default: every listed adapter."""

    @model_validator(mode="after")
    def _adapters(self) -> ServedModel:
        names = [a.name for a in self.adapters]
        if len(set(names)) != len(names):
            i = next(i for i, n in enumerate(names) if names.index(n) != i)
            raise Invalid(
                "adapters: two adapters share a name",
                ("adapters", i, "name"),
                f"write `name: {names[i]}-2` in model.adapters[{i}] (a name of its own)",
            )
        if self.name in names:
            i = names.index(self.name)
            raise Invalid(
                "adapters: an adapter cannot take the served model's name",
                ("adapters", i, "name"),
                f"write `name: {self.name}-adapter` in model.adapters[{i}]",
            )
        if self.max_loras is not None and not self.adapters:
            raise Invalid("max_loras needs adapters", ("max_loras",), "remove `model.max_loras`, or list `adapters`")
        if self.active_parameters_billion is not None and self.active_parameters_billion > self.parameters_billion:
            raise Invalid(
                "active_parameters_billion cannot exceed parameters_billion",
                ("active_parameters_billion",),
                f"write `active_parameters_billion: {self.parameters_billion:g}` (at most) under model",
            )
        return self


class RequestShape(SpecModel):
    """The requests the fleet serves: what the throughput bound and the latency check are computed for."""

    input_tokens: Annotated[int, Field(ge=1, le=10_000_000)]
    """Mean prompt length."""
    output_tokens: Annotated[int, Field(ge=1, le=10_000_000)]
    """Mean generated tokens per request."""
    latency_target_seconds: Annotated[float, Field(gt=0)]
    """End-to-end time a request may take at peak load (prompt and the whole answer)."""
    max_output_tokens: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """Longest answer a client may ask for; sizes the drain on scale-in (default: the context length)."""


class FleetRegion(SpecModel):
    """One region of the fleet: its replica bounds and the demand it serves."""

    region: Region = Field(json_schema_extra=updates("replace"))
    min_replicas: Annotated[int, Field(ge=1, le=10_000)]
    """Always-on replicas; bought on-demand."""
    max_replicas: Annotated[int, Field(ge=1, le=10_000)]
    """Most replicas the region may scale out to."""
    peak_rps: Annotated[float, Field(ge=0)]
    """Requests per second this region must absorb at its daily peak."""
    availability_zones: list[Zone] = []
    """Zones for replicas (two or more); default: the region's a and b zones."""
    instance_type: InstanceTypeName | None = None
    """Override the fleet's instance type here (e.g. where L40S is scarce)."""
    throughput_rps_per_replica: Annotated[float, Field(gt=0)] | None = None
    """Requests per second one replica of this region sustains (vllm bench serve on its instance type);
    default: the fleet's. Give it where the region's type differs: throughput depends on the accelerator."""
    certificate_arn: (
        Annotated[str, StringConstraints(pattern=r"^arn:aws:acm:[a-z0-9-]+:[0-9]{12}:certificate/[A-Za-z0-9_-]+$")]
        | None
    ) = None
    """ACM certificate for the ALB's HTTPS listener (ACM certificates are regional)."""
    vpc_cidr: VpcCidr | None = Field(None, json_schema_extra=updates("replace"))
    """The region's VPC network; default: 10.(64+i).0.0/16 for the i-th region (10.64, 10.65, ...), so no two
    regions overlap and they can be peered or joined by a Transit Gateway (VPC peering needs distinct CIDRs)."""
    image_id: str | None = None
    """This region's replica image (AMIs and SSM parameter versions are regional); default: the fleet's."""

    @model_validator(mode="after")
    def _bounds_and_zones(self) -> FleetRegion:
        if self.min_replicas > self.max_replicas:
            raise Invalid(
                f"min_replicas {self.min_replicas} > max_replicas {self.max_replicas}: the group cannot exist",
                ("min_replicas",),
                f"lower min_replicas or raise max_replicas to at least {self.min_replicas}",
            )
        for i, zone in enumerate(self.availability_zones):
            wrong = zone_problem(zone, self.region)
            if wrong:
                raise Invalid(wrong, ("availability_zones", i), f"use zones of {self.region}, e.g. {self.region}a")
        return self


class Instance(SpecModel):
    """Which accelerator serves: a type, a GPU to pick the cheapest type of, or auto."""

    type: Literal["auto"] | InstanceTypeName = "auto"
    """An instance type, or auto: the cheapest catalog type whose memory holds weights and cache."""
    gpu: AcceleratorName | None = None
    """Restrict auto to types with this accelerator."""


class Autoscaling(SpecModel):
    """Scaling on the region's requests in flight (waiting + running), the signal that tracks latency for
    batched generation."""

    target_queue_depth_per_replica: Annotated[float, Field(gt=0)]
    """Requests in flight (vLLM waiting + running) per in-service replica the region's control loop holds;
    keep it below max_concurrent_sequences, so replicas are added before requests queue."""
    scale_out_cooldown_seconds: Annotated[int, Field(ge=0, le=3600)] = 60
    """Seconds after a scale-out before the next one."""
    scale_in_cooldown_seconds: Annotated[int, Field(ge=0, le=86_400)] = 600
    """Slower than scale-out, so a dip does not drop replicas that take minutes to come back."""
    schedules: list[Schedule] = []
    predictive: bool = False
    """Add predictive scaling on the same metric (forecast from the daily ~10x peak/trough cycle)."""


class Schedule(SpecModel):
    """A scheduled capacity change, e.g. raise the floor before the daily peak."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$")]
    """Name of the scheduled action."""
    recurrence: Annotated[str, StringConstraints(pattern=r"^[!-~]+ [!-~]+ [!-~]+ [!-~]+ [!-~]+$")]
    """Cron expression, in time_zone."""
    time_zone: Annotated[str, StringConstraints(pattern=r"^(region|[A-Za-z_]+(/[A-Za-z0-9_+-]+)*)$")] = "region"
    """region (the default): each region's local time (plan/schedules.py), so a morning floor rises in each
    region's morning; or an IANA time zone for every region (Etc/UTC for one clock)."""
    min_replicas: Annotated[int, Field(ge=0, le=10_000)]
    """Replica floor from the recurrence on."""
    max_replicas: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Replica ceiling from the recurrence on; default: the region's max_replicas."""

    @model_validator(mode="after")
    def _min_within_max(self) -> Schedule:
        if self.max_replicas is not None and self.min_replicas > self.max_replicas:
            raise Invalid(
                f"min_replicas {self.min_replicas} > max_replicas {self.max_replicas}: the scheduled action "
                "would be refused",
                ("min_replicas",),
                f"lower min_replicas or raise max_replicas to at least {self.min_replicas}",
            )
        return self


class LoadBalancer(SpecModel):
    """The regional entry point."""

    type: Literal["alb", "nlb"] = Field("alb", json_schema_extra=updates("replace"))
    """alb (HTTPS, a WAF web ACL possible) or nlb (TLS; takes no WAF). Changing it replaces the load balancer."""
    health_check_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")] = "/health"
    """Answers 200 only when the weights are loaded."""
    server_port: Annotated[int, Field(ge=1, le=65535)] = 8000
    """Port the model server listens on; target group and health checks use it."""
    healthy_threshold: Annotated[int, Field(ge=2, le=10)] = 2
    """Consecutive passing health checks before a replica takes traffic."""
    unhealthy_threshold: Annotated[int, Field(ge=2, le=10)] = 3
    """Consecutive failing health checks before a replica is taken out."""
    health_check_interval_seconds: Annotated[int, Field(ge=5, le=300)] = 15
    """Seconds between health checks."""


class GlobalRouting(SpecModel):
    """How users reach the nearest healthy region."""

    type: Literal["route53_latency", "global_accelerator"]
    """route53_latency (latency records, a health check per region) or global_accelerator (one accelerator, an
    endpoint group per region)."""
    domain_name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+\.[a-z]{2,}$")]
    """The fleet's DNS name, under the hosted zone."""
    hosted_zone_id: Annotated[str, StringConstraints(pattern=r"^Z[A-Z0-9]{4,32}$")] | None = None
    """Route 53 (public) hosted zone of domain_name: latency records, or the alias of the accelerator. An internal
    fleet's latency records go to a private hosted zone the stack makes instead, associated with the fleet's VPCs."""


class ColdStart(SpecModel):
    """Boot, image pull, weights and engine start are what make scaling out slow."""

    weights_load_seconds: Annotated[float, Field(gt=0)] | None = None
    """Measured launch to healthy (p99 of your own scale-outs); replaces the modelled cold start."""
    download_gb_s: Annotated[float, Field(gt=0)] | None = None
    """Registry-replica download rate; default: the instance type's baseline network bandwidth."""
    compile_cache: bool = False
    """The server image or volume already holds vLLM's compile caches (torch.compile, JIT kernels) for this model
    and GPU, so the engine starts warm (catalog engine_init_cached_seconds); the stack does not build them."""
    warm_pool: Literal["auto", "off"] | Annotated[int, Field(ge=0)] = "auto"
    """Pre-initialized stopped instances; auto sizes it from the cold start and the demand ramp."""
    demand_ramp_minutes: Annotated[float, Field(gt=0)] = 60.0
    """Time demand takes to climb from trough to peak (about 10x)."""


class Waf(SpecModel):
    """The AWS WAF web ACL in front of each regional load balancer."""

    rate_limit_per_ip: Annotated[int, Field(ge=10, le=2_000_000_000)] = 600
    """Requests one client IP may send in 5 minutes before it is blocked (WAF rate-based rule)."""
    rate_limit_per_key: Annotated[int, Field(ge=10, le=2_000_000_000)] | None = None
    """Requests one API key (the Authorization header) may send in 5 minutes before it is blocked, whatever
    IPs it comes from; None: no per-key limit. Requests without the header are left to the per-IP rule."""
    managed_rule_groups: list[Annotated[str, StringConstraints(pattern=r"^AWSManagedRules[A-Za-z0-9]+$")]] = [
        "AWSManagedRulesAmazonIpReputationList",
        "AWSManagedRulesKnownBadInputsRuleSet",
        "AWSManagedRulesCommonRuleSet",
    ]
    """AWS managed rule groups (vendor AWS). The common rule set's 8 KB body limit is set to count:
    prompts are larger than that."""


class ClientVpc(SpecModel):
    """A VPC of the fleet's account whose clients resolve an internal fleet's name (Route 53 CreateHostedZone and
    AssociateVPCWithHostedZone: VPCId, VPCRegion)."""

    vpc_id: Annotated[str, StringConstraints(pattern=r"^vpc-[0-9a-f]{8,17}$")]
    """The VPC's id (vpc-...), in the fleet's account."""
    region: Region
    """The VPC's region (a private zone is associated with VPCs of any region)."""


class Access(SpecModel):
    """Who may reach the fleet: the internet behind authentication and a WAF, or only the VPC."""

    scheme: Literal["internet-facing", "internal"] = Field("internet-facing", json_schema_extra=updates("replace"))
    """internal: the load balancers get private addresses only (reach them over peering or PrivateLink)."""
    client_cidrs: list[VpcCidr] = []
    """internal: the client networks (peered VPCs, Transit Gateway, VPN) the load balancers admit on 443/80,
    besides the fleet's own VPC."""
    client_vpcs: list[ClientVpc] = []
    """internal: VPCs of the fleet's account whose clients resolve its name, associated with its private hosted zone
    besides the VPCs its load balancers are in (another account's VPC needs an association authorization:
    docs/inference-operations.md, "Private endpoints")."""
    auth: Literal["api_key", "none"] = "api_key"
    """api_key: a key in Secrets Manager per region, checked by the server (vLLM --api-key) on /v1."""
    waf: Waf | None = Waf()
    """None: no web ACL (refused for internet-facing fleets)."""


class KubernetesPlatform(SpecModel):
    """Serving on existing Kubernetes clusters, one per region."""

    kubeconfig_keys: dict[Region, Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:_-]*$")]]
    """Per region, the Pulumi config key holding that cluster's kubeconfig (a secret)."""
    autoscaler: Literal["hpa", "keda"] = "hpa"
    """keda (a ScaledObject on the Prometheus query) or hpa (autoscaling/v2 on an external metric: needs an
    external-metrics adapter)."""
    namespace: K8sName = "inference"
    gpu_product_label: K8sLabelValue | None = None
    """Value of nvidia.com/gpu.product to select nodes by; default: from the instance's GPU."""
    queue_metric: PromMetricName | None = None
    """The waiting-requests metric counted as load together with the engine's running-requests one, per replica;
    default: the engine's own (vllm:num_requests_waiting, sglang:num_queue_reqs, trtllm_num_requests_waiting)."""
    prometheus_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$")] | None = None
    """Where KEDA reads the queue metric (autoscaler keda); default: the Prometheus each cluster declares
    (organization file, clusters.<name>.components.prometheus_operator): the operator's governing Service
    `prometheus-operated` in its namespace, port 9090, which the Prometheus Operator creates for every Prometheus."""
    prometheus_release: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")] | None = None
    """The label value release=<this> the clusters' Prometheus selects PodMonitors by; default: what each cluster
    declares (organization file, clusters.<name>.components.prometheus_operator.release), which a value here must
    match."""
    external_metrics_adapter: Literal["prometheus-adapter"] | None = None
    """autoscaler hpa: the external-metrics API server the cluster runs (required: HPA has none built in)."""
    api_key_secret: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")] | None = None
    """Kubernetes Secret (key api-key) holding the server's API key (auth api_key)."""
    service_account_role_arn: (
        Annotated[str, StringConstraints(pattern=r"^arn:aws:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]+$")] | None
    ) = None
    """IAM role (IRSA or Pod Identity) the pods use to read the region's registry replica."""


class Slo(SpecModel):
    """Per-region service-level alarms (components/inference/slo.py): what paging on a serving region means.
    The end-to-end target is requests.latency_target_seconds (the load balancer's response time p90 and p99
    are alarmed against it). Who is paged is the account's `alerts` (organization file), one topic per region."""

    error_rate_percent: Annotated[float, Field(gt=0, le=100)] = 1.0
    """Share of requests the replicas answer with a 5xx (ALB HTTPCode_Target_5XX_Count / RequestCount) above
    which the region alarms."""
    time_to_first_token_seconds: Annotated[float, Field(gt=0, le=3600)] | None = None
    """Mean time to first token (vLLM's vllm:time_to_first_token_seconds, per minute) above which the region
    alarms; None: published, not alarmed."""
    inter_token_latency_seconds: Annotated[float, Field(gt=0, le=60)] | None = None
    """Mean time between output tokens (vLLM's inter-token latency histogram, per minute) above which the region
    alarms; None: published, not alarmed."""
    evaluation_minutes: Annotated[int, Field(ge=1, le=60)] = 5
    """Consecutive breaching minutes before an alarm fires (a single slow minute is not an incident)."""


class InferenceSpec(SpecModel):
    """A geo-distributed inference fleet."""

    @property
    def target(self) -> Target:
        return Target("aws", self.account, tuple(r.region for r in self.regions))

    name: Name
    account: AccountName
    """Account (purpose: inference) from the organization file."""
    platform: Literal["ec2", "kubernetes"] = "ec2"
    """ec2: Auto Scaling groups behind a load balancer per region; kubernetes: Deployments on existing clusters."""
    model: ServedModel
    instance: Instance = Instance()
    regions: Annotated[list[FleetRegion], Field(min_length=1)]
    requests: RequestShape
    throughput_rps_per_replica: Annotated[float, Field(gt=0)]
    """Requests per second one replica sustains at the latency target: a measured benchmark
    (vllm bench serve); the planner refuses a figure above its memory-bandwidth bound. A region on another
    instance type gives its own (regions[].throughput_rps_per_replica)."""
    autoscaling: Autoscaling
    spot_burst_share: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Share of capacity above the on-demand base (min replicas) that may run on spot."""
    load_balancer: LoadBalancer = LoadBalancer()
    global_routing: GlobalRouting
    cold_start: ColdStart = ColdStart()
    kubernetes: KubernetesPlatform | None = None
    nat_gateways: Literal["per_zone", "single"] = "per_zone"
    """per_zone: a NAT gateway in every zone, so a zone's loss leaves the others their egress (priced per
    gateway-hour); single: one, in the first zone (cheaper; the other zones lose egress with it)."""
    image_id: str = DEFAULT_SERVING_AMI
    """The replicas' machine image: an AMI id (ami-...) or an SSM parameter at an explicit version,
    resolve:ssm:<name>:<version>, so a new driver enters only as a rollout (serving-image-not-pinned refuses
    `latest`). Set per region (regions[].image_id) where ids or versions differ."""
    engine: ServingEngine = "vllm"
    """The model server: vllm, tensorrt-llm (trtllm-serve) or sglang. The planner admits the model and rates a
    replica by that engine's own KV-cache rule, and the fleet runs its official image and launch command
    (docs/serving-engines.md); server_image must be that engine's image."""
    server_image: ImageReference = "vllm/vllm-openai:v0.11.0"
    """Container image of the model server (ec2 runs it with Docker): a Docker image reference
    ([registry[:port]/]path[:tag])."""
    image_source: Literal["ecr_mirror", "ecr_pull_through", "direct"] = "ecr_mirror"
    """ecr_mirror (the default; ec2 and kubernetes): replicas pull server_image by digest from a repository the
    stack owns in each region (<fleet>/<name>), filled once per digest by the stack's mirror script (output
    mirror_image_script), with no stored registry credential; needs server_image_digest. ecr_pull_through (ec2):
    from ECR, which caches the image from its registry on first pull (a pull-through cache rule per region; Docker
    Hub and GitHub need a credential set by hand in every region). direct: from the registry itself, through the NAT
    gateways (Docker Hub limits anonymous pulls per address)."""
    server_image_digest: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    """Pin the image by digest (image@sha256:...), so every replica runs the same bytes."""
    server_kind: Literal["cuda", "neuron"] = "cuda"
    """cuda: vLLM's CUDA image, NVIDIA GPUs only. neuron: a Neuron build of vLLM (server_image must be
    one) on Inferentia/Trainium, with its flags in server_args."""
    server_args: list[Annotated[str, StringConstraints(min_length=1, max_length=256)]] = []
    """Extra server flags, appended to the ones gpuinfra sets."""
    access: Access = Access()
    slo: Slo = Slo()
    """Per-region alarms on errors, latency, unhealthy replicas, time to first token and inter-token latency."""
    failover: Literal["none", "n_plus_one"] = "n_plus_one"
    """n_plus_one (the default): each region's max_replicas is raised (if needed) so it can take its own peak plus
    the peak of the largest other region, whose traffic latency routing sends to its nearest survivor when it
    fails; the quota plan and the cost count the raised maximum. none: max_replicas as written, and the error
    failover-short says by how much a region would fall short (suppress it to accept that)."""
    tags: Tags = {}
    log_retention_days: LogRetentionDays = 365
    """Days the stack keeps its VPC flow logs (see `flow_logs`), WAF logs (CloudWatch Logs) and load balancer access
    logs (S3). One of the retentions CloudWatch Logs accepts, so either flow-log destination takes it."""
    flow_logs: FlowLogDestination = "s3"
    """Where the VPC flow logs go: a bucket of the stack's own whose objects expire after `log_retention_days`
    (the default: vended-log delivery to S3 costs half of CloudWatch Logs ingestion), or `cloud-watch-logs`, a
    log group with that retention, to query with Logs Insights."""
    suppress: list[RuleId] = []
    """Rule ids of warnings to silence for this stack."""

    def throughput_of(self, region: FleetRegion) -> float:
        """The measured requests/s of one replica in `region`: its own figure, else the fleet's."""
        return region.throughput_rps_per_replica or self.throughput_rps_per_replica

    def vpc_cidr_of(self, index: int) -> str:
        """The VPC network of the index-th region: its own, else 10.(64+index).0.0/16 (distinct per region)."""
        return self.regions[index].vpc_cidr or f"10.{DEFAULT_VPC_SECOND_OCTET + index}.0.0/16"

    def throughput_path(self, index: int) -> tuple[str | int, ...]:
        """Where the figure `throughput_of(regions[index])` is written in the spec."""
        if self.regions[index].throughput_rps_per_replica is not None:
            return ("regions", index, "throughput_rps_per_replica")
        return ("throughput_rps_per_replica",)

    @model_validator(mode="after")
    def _platform_fields(self) -> InferenceSpec:
        if self.platform == "kubernetes" and self.kubernetes is None:
            keys = ", ".join(f"{r.region}: 'gpuinfra:kube-{r.region}'" for r in self.regions)
            raise Invalid(
                "platform kubernetes needs the kubernetes section (kubeconfig_keys per region)",
                ("platform",),
                f"write `kubernetes: {{kubeconfig_keys: {{{keys}}}}}`, or `platform: ec2`",
            )
        if self.platform == "ec2" and self.kubernetes is not None:
            raise Invalid(
                "the kubernetes section only applies to platform kubernetes",
                ("kubernetes",),
                "write `platform: kubernetes`, or remove the `kubernetes` section",
            )
        routing = self.global_routing
        if self.access.client_vpcs and self.access.scheme != "internal":
            raise Invalid(
                "client_vpcs name VPCs that resolve an internal fleet's private zone; this fleet is internet-facing",
                ("access", "client_vpcs"),
                "remove client_vpcs, or set access.scheme: internal",
            )
        vpc_ids = [v.vpc_id for v in self.access.client_vpcs]
        if len(vpc_ids) != len(set(vpc_ids)):
            raise Invalid(
                "a client VPC is listed twice (a private zone takes each VPC once)",
                ("access", "client_vpcs"),
                "list each VPC once",
            )
        if routing.type == "route53_latency" and routing.hosted_zone_id is None and self.access.scheme != "internal":
            raise Invalid(
                "route53_latency needs hosted_zone_id (the public zone of domain_name)",
                ("global_routing", "hosted_zone_id"),
                f"add `hosted_zone_id: Z0123456789ABCDEFGHIJ` (yours: the Route 53 zone of {routing.domain_name}, "
                "`aws route53 list-hosted-zones-by-name`), or make the fleet internal (`access: {scheme: internal}`: "
                "its records then go to a private zone it makes)",
            )
        return self


Autoscaling.model_rebuild()

__all__ = [
    "LORA_RANKS",
    "AcceleratorName",
    "Access",
    "Autoscaling",
    "ClientVpc",
    "ColdStart",
    "FleetRegion",
    "GlobalRouting",
    "InferenceSpec",
    "Instance",
    "KubernetesPlatform",
    "KvCache",
    "LoadBalancer",
    "RequestShape",
    "Schedule",
    "ServedAdapter",
    "ServedModel",
    "ServingPrecision",
    "Slo",
    "Waf",
]
