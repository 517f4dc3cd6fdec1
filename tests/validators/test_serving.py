"""Serving rules."""

from __future__ import annotations

import pytest
from gpuinfra.spec.inference import DEFAULT_SERVING_AMI
from helpers import DELETE, Case, example_data, run_case

ADAPTER = {
    "name": "support",
    "weights_prefix": "adapters/support/v2/",
    "rank": 16,
    "parameters_million": 13.6,
    "base_model": "llama-3.1-8b-instruct",
}

CASES = [
    Case("adapters-on-kubernetes", "chat-serve-k8s", {"model.adapters": [ADAPTER]}, message="does not fetch adapters"),
    Case("adapters-on-kubernetes", "chat-serve", {"model.adapters": [ADAPTER]}, fires=False),
    Case(
        "accelerator-without-domain-record",
        "chat-serve",
        {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}},
        message="no DNS record for chat.acme.example",
    ),
    Case(
        "accelerator-without-domain-record",
        "chat-serve",
        {"global_routing.type": "global_accelerator"},  # the example's zone stays: the alias is made
        fires=False,
    ),
    # The DLAMI's `latest` parameter is resolved at every launch: a new driver with the next scale-out.
    Case(
        "serving-image-not-pinned",
        "chat-serve",
        {"image_id": DEFAULT_SERVING_AMI},
        message="replica image of us-east-1 is not pinned: .*latest.* resolves the parameter.s current value",
    ),
    Case(
        "serving-image-not-pinned",
        "chat-serve",
        {"regions[1].image_id": "resolve:ssm:/acme/serving/gpu-ami"},
        message="us-west-2 is not pinned: .* resolves the parameter's current value at every launch",
    ),
    Case("serving-image-not-pinned", "chat-serve", {"regions[1].image_id": "ami-0abc1234def567890"}, fires=False),
    Case("serving-image-not-pinned", "chat-serve", fires=False),
    # AWS rolls back only to a template whose ImageId is an AMI id (RollbackInstanceRefresh): a pinned parameter
    # version is resolved to its AMI id at deploy (the example: no warning), an unpinned parameter stays one.
    Case(
        "rollout-without-rollback",
        "chat-serve",
        {"image_id": "resolve:ssm:/acme/serving/gpu-ami"},
        message="^us-east-1, us-west-2, eu-central-1, ap-northeast-1: .*cannot roll back: the image "
        "resolve:ssm:/acme/serving/gpu-ami is a Systems Manager parameter",
    ),
    Case(
        "rollout-without-rollback",
        "chat-serve",
        {"regions[0].image_id": "ami-0abc1234def567890", "image_id": "resolve:ssm:/acme/serving/gpu-ami"},
        message="^us-west-2, eu-central-1, ap-northeast-1: ",
    ),
    Case(
        "rollout-without-rollback",
        "chat-serve",
        {"image_id": "ami-0abc1234def567890", "regions[2].image_id": "resolve:ssm:/acme/serving/gpu-ami"},
        message="^eu-central-1: .*gpu-ami is a Systems Manager parameter",
    ),
    Case("rollout-without-rollback", "chat-serve", fires=False),  # resolve:ssm:...:7, read at deploy
    Case("rollout-without-rollback", "chat-serve", {"image_id": "ami-0abc1234def567890"}, fires=False),
    Case("rollout-without-rollback", "chat-serve-k8s", fires=False),
    Case(
        "server-image-not-pinned",
        "chat-serve",
        {"server_image_digest": None},
        message="vllm/vllm-openai:v0.11.0 is not pinned by digest",
    ),
    Case("server-image-not-pinned", "chat-serve", fires=False),
    # 405B parameters in fp8 are 405 GB: more than the largest serving type holds (g6e.48xlarge, 8 x 48 GB L40S)
    Case("no-instance-fits", "chat-serve", {"model.parameters_billion": 405}, message="no instance holds"),
    Case("no-instance-fits", "chat-serve", fires=False),
    Case(
        "model-does-not-fit-instance",
        "chat-serve",
        # vLLM's rule: 16,384 MiB x 0.9 - 1 GiB workspace = 14.4 GB for 8 GB of weights + one 131,072-token
        # sequence of fp8 KV (131,072 x 65,536 B = 8.6 GB) = 16.6 GB.
        {"regions[3].instance_type": "g4dn.xlarge", "model.context_length_tokens": 131072},
        message=r"g4dn.xlarge offers 14.4 GB but the model needs 16.6 GB .* in ap-northeast-1",
    ),
    Case("model-does-not-fit-instance", "chat-serve", fires=False),
    Case(
        "demand-exceeds-max",
        "chat-serve",
        # failover none: n_plus_one (the default) would raise the maximum to (100 + 14) / 1.5 = 76.
        {"regions[0].peak_rps": 100, "failover": "none"},
        message="us-east-1: peak needs 67 replicas but max_replicas is 18",  # 100 / 1.5
    ),
    Case("demand-exceeds-max", "chat-serve", fires=False),
    Case(
        "failover-short",
        "chat-serve",
        {"failover": "none"},
        # eu-central-1 takes us-east-1's 24 on its own 12: 36 / 1.5 = 24 replicas, max 10 serves 15.
        message=r"eu-central-1: with us-east-1 lost at peak it takes 36 requests/s \(24 replicas\) but its maximum "
        r"of 10 ",
    ),
    Case("failover-short", "chat-serve", fires=False),
    # One region: n_plus_one (the default) has no survivor to size, and says so.
    Case(
        "failover-single-region",
        "chat-serve",
        {"regions": example_data("chat-serve")["config"]["gpuinfra:inference"]["regions"][:1]},
        message="us-east-1 is the fleet's only region: losing it stops the fleet, and failover n_plus_one has no other",
    ),
    Case("failover-single-region", "chat-serve", fires=False),
    # An internal fleet's records go to the private zone the stack makes: a public zone given is unused.
    Case(
        "internal-records-in-public-zone",
        "chat-serve-k8s",
        {"global_routing.hosted_zone_id": "Z0ACME1234567"},
        message="hosted_zone_id Z0ACME1234567 is not used: an internal fleet's records go to a private zone",
    ),
    Case("internal-records-in-public-zone", "chat-serve-k8s", fires=False),
    Case("internal-records-in-public-zone", "chat-serve", fires=False),  # internet-facing: its public zone
    Case(
        "alarms-page-no-one",
        "chat-serve",
        org={"accounts.ml-inference.alerts": DELETE},
        message="account 'ml-inference' names no alerts: the fleet's service-level alarms would page no one",
    ),
    Case("alarms-page-no-one", "chat-serve", fires=False),
    Case(
        "adapter-on-another-base",
        "chat-serve",
        {"model.adapters[1].base_model": "llama-3.1-70b"},
        message="adapter legal was trained on llama-3.1-70b, not the served llama-3.1-8b-instruct",
    ),
    Case("adapter-on-another-base", "chat-serve", fires=False),
    Case(
        "schedule-time-zone-unknown",
        "chat-serve",
        {"autoscaling.schedules[0].time_zone": "Mars/Olympus"},
        message="Mars/Olympus is not an IANA time zone",
    ),
    Case("schedule-time-zone-unknown", "chat-serve", fires=False),
    Case(
        "mirror-without-digest",
        "chat-serve",
        {"server_image_digest": None},
        message="image_source ecr_mirror mirrors one digest of vllm/vllm-openai:v0.11.0",
    ),
    Case("mirror-without-digest", "chat-serve", fires=False),
    Case(
        "image-needs-registry-credential",
        "chat-serve",
        {"image_source": "ecr_pull_through"},
        message="the pull-through cache of docker.io needs a credential set by hand in each of the 4 regions",
    ),
    Case("image-needs-registry-credential", "chat-serve", fires=False),
    Case(
        "region-without-weights-replica",
        "chat-serve",
        {"regions[1].region": "eu-west-1", "regions[1].certificate_arn": None},
        message="no registry replica in eu-west-1",
    ),
    Case("region-without-weights-replica", "chat-serve", fires=False),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": None},
        message="us-east-1 has no certificate_arn for the HTTPS listener",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": "arn:aws:acm:us-west-2:222222222222:certificate/x"},
        message="certificate_arn is in us-west-2, not us-east-1",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve",
        {"regions[0].certificate_arn": None, "load_balancer.type": "nlb"},
        message="us-east-1 has no certificate_arn for the TLS listener",
    ),
    Case(
        "endpoint-without-certificate",
        "chat-serve-k8s",
        {"regions[1].certificate_arn": None},
        message="eu-central-1 has no certificate_arn for the load balancer Service",
    ),
    Case("endpoint-without-certificate", "chat-serve", fires=False),
    Case("scale-in-faster-than-scale-out", "chat-serve", {"autoscaling.scale_in_cooldown_seconds": 30}),
    Case("scale-in-faster-than-scale-out", "chat-serve", fires=False),
    Case(
        "scaling-target-above-batch",
        "chat-serve",
        {"autoscaling.target_queue_depth_per_replica": 40},
        message="target_queue_depth_per_replica 40 is above max_concurrent_sequences 36",
    ),
    Case("scaling-target-above-batch", "chat-serve", fires=False),
    Case(
        "training-class-instance",
        "chat-serve",
        {"regions[0].instance_type": "p5.48xlarge"},
        message="p5.48xlarge is a training-class instance",
    ),
    Case("training-class-instance", "chat-serve", fires=False),
    Case(
        "kubeconfig-per-region",
        "chat-serve",
        {"platform": "kubernetes", "kubernetes": {"kubeconfig_keys": {"us-east-1": "gpuinfra:kube-use1"}}},
        config={"gpuinfra:kube-use1": {"secure": "v1:abc"}},
        message="no kubeconfig key for us-west-2",
    ),
    Case("kubeconfig-per-region", "chat-serve", fires=False),
    Case(
        "accelerator-needs-load-balancers",
        "chat-serve-k8s",
        {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}},
        message="global_accelerator needs the fleet's own load balancers",
    ),
    Case("accelerator-needs-load-balancers", "chat-serve-k8s", fires=False),
    # The figures: 16 GB of bf16 weights, --max-num-seqs 4 on one L4 (300 GB/s, 121 bf16 TFLOPS), 1,000
    # tokens in and 250 out. The physical ceiling (100% of bandwidth and peak): a step reads 16e9 + 4 x 131,072 B x
    # 1,125 = 16.59e9 B in 55.30 ms, its decode FLOPs (4 x 16e9 = 0.53 ms) hide under the read, and prefill of
    # 4 x 4 x 16e9 FLOPs takes 2.12 ms: 4 / 57.42 ms = 69.7 tokens/s = 0.28 requests/s, far below the claimed 2.5.
    Case(
        "throughput-above-bound",
        "chat-serve",
        {
            "model.precision": "bf16",
            "model.kv_cache.precision": None,
            "model.max_concurrent_sequences": 4,
            "throughput_rps_per_replica": 2.5,
        },
        message=r"throughput_rps_per_replica 2.5 is above what g6\.\w+ in us-east-1 can do at all: 300 GB/s .* is "
        r"at most 0\.28 requests/s at 250 output tokens",
    ),
    Case("throughput-above-bound", "chat-serve", fires=False),
    # chat-serve's calibrated ceiling on g6.xlarge (tests/plan/test_roofline.py shows the arithmetic at 24 sequences):
    # at 36 sequences a decode step reads 8.0 GB of weights + 36 x 64 KiB x 1,125 tokens of fp8 KV = 10.65 GB at 60%
    # of 300 GB/s (59.2 ms), and its share of prefill is 2 x 8.03e9 x 36 x 1,000/250 FLOPs at 0.56 of the L4's fp8
    # peak (17.0 ms): 76.2 ms a step, 36/0.0762 = 472 tokens/s = 1.89 requests/s; 1.8 is 95% of it, above 80%, and
    # below the physical bound (an error only there).
    Case(
        "throughput-near-ceiling",
        "chat-serve",
        {"throughput_rps_per_replica": 1.8},
        message=r"throughput_rps_per_replica 1\.8 is 95% of the calibrated ceiling of g6\.xlarge in us-east-1 "
        r"\(1\.89 requests/s, 47[23] tokens/s at batch 36\)",
    ),
    Case("throughput-near-ceiling", "chat-serve", fires=False),
    # 250 tokens at 13.1 steps/s (76.2 ms a step, as above: fp8, batch 36 on an L4, prefill time-shared) take 19.0 s.
    Case(
        "latency-target-unreachable",
        "chat-serve",
        {"requests.latency_target_seconds": 5},
        message=r"250 output tokens at 13\.1 steps/s \(batch 36\) take 19\.0 s",
    ),
    Case("latency-target-unreachable", "chat-serve", fires=False),
    # g6.xlarge: 16 GiB of RAM, 75% = 12.9 GB, for 16 GB of bf16 weights.
    Case(
        "host-ram-too-small",
        "chat-serve",
        {"model.precision": "bf16", "instance.type": "g6.xlarge"},
        message="g6.xlarge in us-east-1 has 16 GiB of host RAM for 16.0 GB of weights",
    ),
    Case("host-ram-too-small", "chat-serve", fires=False),
    Case(
        "server-cannot-drive-accelerator",
        "chat-serve",
        {"regions[3].instance_type": "inf2.xlarge"},
        message=r"inf2.xlarge in ap-northeast-1 has Inferentia2 \(inferentia\); the cuda server cannot run on it",
    ),
    Case("server-cannot-drive-accelerator", "chat-serve", fires=False),
    Case("neuron-server-without-flags", "chat-serve", {"server_kind": "neuron"}, message="vLLM's CUDA image"),
    Case("neuron-server-without-flags", "chat-serve", fires=False),
    Case(
        "invalid-tensor-parallel",
        "chat-serve",
        {
            "regions[3].instance_type": "inf2.24xlarge",
            "server_kind": "neuron",
            "server_image": "public.ecr.aws/neuron/vllm:1",
            "server_args": ["--device", "neuron"],
        },
        message="inf2.24xlarge in ap-northeast-1: --tensor-parallel-size 6: 32 attention heads do not divide",
    ),
    Case("invalid-tensor-parallel", "chat-serve", fires=False),
    Case("internet-facing-without-protection", "chat-serve", {"access.auth": "none"}, message="without authentication"),
    Case("internet-facing-without-protection", "chat-serve", {"access.waf": None}, message="without a WAF"),
    Case(
        "internet-facing-without-protection",
        "chat-serve",
        {"load_balancer.type": "nlb"},
        message="not Network Load Balancers",
    ),
    Case(
        "internet-facing-without-protection",
        "chat-serve",
        {"access": {"scheme": "internal", "auth": "none", "waf": None}},
        fires=False,
    ),
    Case("internet-facing-without-protection", "chat-serve", fires=False),
    Case("hpa-without-adapter", "chat-serve-k8s", {"kubernetes.autoscaler": "hpa"}, message="external-metrics"),
    Case(
        "hpa-without-adapter",
        "chat-serve-k8s",
        {"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"},
        fires=False,
    ),
    Case(
        "keda-setting-under-hpa",
        "chat-serve-k8s",
        {
            "kubernetes.autoscaler": "hpa",
            "kubernetes.external_metrics_adapter": "prometheus-adapter",
            "kubernetes.queue_metric": "my_queue_depth",
        },
        message="kubernetes.queue_metric is read only by KEDA",
    ),
    Case(
        "keda-setting-under-hpa",
        "chat-serve-k8s",
        {
            "kubernetes.autoscaler": "hpa",
            "kubernetes.external_metrics_adapter": "prometheus-adapter",
            "kubernetes.prometheus_url": "http://prometheus.monitoring:9090",
        },
        message="kubernetes.prometheus_url is read only by KEDA",
    ),
    Case(
        "keda-setting-under-hpa",
        "chat-serve-k8s",
        {"kubernetes.queue_metric": "my_queue_depth", "kubernetes.prometheus_url": "http://prometheus.monitoring:9090"},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)


def test_every_catalog_region_has_its_local_time_zone() -> None:
    """A region the spec may name (the catalog's region list) always has a zone (catalog/data/time_zones.yaml), so
    schedule-time-zone-unknown fires only for a bad time_zone; a region the table lacks (one the catalog gains later)
    gives None. Each row's location is the region's description in the installed botocore's endpoints.json (the
    source the file cites)."""
    import json
    from pathlib import Path
    from zoneinfo import ZoneInfo

    import botocore
    from gpuinfra.catalog import load_catalog
    from gpuinfra.plan.schedules import REGION, schedule_time_zone

    catalog = load_catalog()
    zones = catalog.time_zones()
    endpoints = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    (aws,) = [p for p in endpoints["partitions"] if p["partition"] == "aws"]
    assert catalog.region_time_zones is not None
    for region in catalog.region_list.codes:
        zone = schedule_time_zone(REGION, region, zones)
        assert zone is not None, region
        ZoneInfo(zone)  # an IANA name the tz database knows
        assert catalog.region_time_zones.zones[region].location == aws["regions"][region]["description"]
    assert (zones["ap-northeast-1"], zones["eu-central-1"], zones["us-west-2"]) == (
        "Asia/Tokyo",
        "Europe/Berlin",
        "America/Los_Angeles",
    )
    assert schedule_time_zone(REGION, "xx-nowhere-1", zones) is None
    assert schedule_time_zone("Etc/UTC", "ap-northeast-1", zones) == "Etc/UTC"  # a zone given is kept


def test_the_iana_zone_names_are_the_databases_read_once() -> None:
    """schedule-time-zone-unknown reads the zone names once per process (each read opens the database's ~600 files):
    the same names the database gives now, one object however often a stack is validated."""
    import zoneinfo

    from gpuinfra.validators.schedules import iana_time_zones

    assert iana_time_zones() == zoneinfo.available_timezones()
    assert iana_time_zones() is iana_time_zones()
    assert {"Asia/Tokyo", "Etc/UTC"} <= iana_time_zones() and "Mars/Olympus" not in iana_time_zones()
