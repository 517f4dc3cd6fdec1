"""Capacity and protection as planned: WAF body rules counted on the model API, probe timeouts for a loaded
GPU server, a pinned instance type that stays pinned, on-demand overflow when spot is short."""

from __future__ import annotations

from helpers import example_graph

CRS_BODY_RULES = {
    # AWS WAF DG, "Core rule set (CRS) managed rule group": the rules whose inspected component is the body.
    "SizeRestrictions_BODY",
    "CrossSiteScripting_BODY",
    "GenericLFI_BODY",
    "GenericRFI_BODY",
    "EC2MetaDataSSRF_BODY",
}


def test_core_rule_set_counts_body_rules_and_blocks_the_rest() -> None:
    acls = example_graph("chat-serve").of_type("aws:wafv2/webAcl:WebAcl")
    assert len(acls) == 4
    for acl in acls:
        crs = next(r for r in acl.inputs["rules"] if r["name"] == "AWSManagedRulesCommonRuleSet")
        statement = crs["statement"]["managedRuleGroupStatement"]
        overrides = {o["name"]: o["actionToUse"] for o in statement["ruleActionOverrides"]}
        assert set(overrides) == CRS_BODY_RULES
        assert all(set(action) == {"count"} for action in overrides.values())
        assert crs["overrideAction"] == {"none": {}}  # the group's other rules keep their Block
        rate = next(r for r in acl.inputs["rules"] if r["name"] == "rate-per-ip")
        assert "block" in rate["action"]


def test_known_bad_inputs_count_the_body_rules_a_prompt_may_trip() -> None:
    """A prompt quoting `${jndi:ldap://...}` or a serialized Java object is text to the model: the group's body rules
    (AWS WAF DG, "Known bad inputs managed rule group": Log4JRCE_BODY, JavaDeserializationRCE_BODY) count, the rest
    of the group keeps blocking."""
    for acl in example_graph("chat-serve").of_type("aws:wafv2/webAcl:WebAcl"):
        rule = next(r for r in acl.inputs["rules"] if r["name"] == "AWSManagedRulesKnownBadInputsRuleSet")
        statement = rule["statement"]["managedRuleGroupStatement"]
        overrides = {o["name"]: o["actionToUse"] for o in statement["ruleActionOverrides"]}
        assert overrides == {"Log4JRCE_BODY": {"count": {}}, "JavaDeserializationRCE_BODY": {"count": {}}}
        assert rule["overrideAction"] == {"none": {}}


def test_kubernetes_probes_tolerate_a_loaded_server() -> None:
    """Probe.timeoutSeconds defaults to 1 s (Kubernetes API core/v1 Probe)."""
    deployments = example_graph("chat-serve-k8s").of_type("kubernetes:apps/v1:Deployment")
    assert deployments
    for deployment in deployments:
        container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            probe = container[kind]
            assert probe["timeoutSeconds"] >= 5, kind
            assert probe["timeoutSeconds"] < probe["periodSeconds"] or kind == "startupProbe", kind
        live = container["livenessProbe"]
        # A restart costs a cold start: liveness gives up only after minutes of silence, readiness first.
        assert live["periodSeconds"] * live["failureThreshold"] >= 600
        ready = container["readinessProbe"]
        assert ready["periodSeconds"] * ready["failureThreshold"] < live["periodSeconds"] * live["failureThreshold"]


def test_a_pinned_type_stays_pinned_on_spot_and_in_the_quota_plan() -> None:
    """instance.type g6.xlarge (4 vCPUs, catalog): the burst group launches only g6.xlarge, and the spot quota
    need is max_spot x 4 vCPUs, not the largest diversified type's."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.plan.inference import plan_inference
    from helpers import inputs_for

    catalog = load_catalog()
    inputs = inputs_for("chat-serve", {"instance.type": "g6.xlarge"})
    plan = plan_inference(inputs.spec, inputs.org.org, catalog)  # type: ignore[arg-type]
    vcpus = catalog.instance("g6.xlarge").vcpu  # type: ignore[union-attr]
    assert vcpus == 4
    for rp in plan.regions:
        if rp.region == "ap-northeast-1":
            assert rp.spot_types == ["g6e.xlarge"]  # the region's own pin
            continue
        assert rp.spot_types == ["g6.xlarge"]
        spot = next(q for q in plan.quotas if q.region == rp.region and q.purchase == "spot")
        assert spot.vcpus == rp.max_spot * 4


def test_on_demand_overflow_when_spot_is_short() -> None:
    """Auto Scaling does not substitute on-demand for spot (InstancesDistribution: 0% on-demand above the base
    is all spot): a burst replica asked for and never launched (desired above in service plus pending) moves its
    slot to an on-demand group of the burst's size, one alarm with two actions (overflow +1, burst -1), and the
    overflow leaves first on scale-in. tests/components/test_bounded_replicas.py drives these through a shortage."""
    from gpuinfra.pulumi.components.inference.scaling import SPOT_SHORT_PERIODS

    graph = example_graph("chat-serve")
    groups = {g.inputs["name"]: g for g in graph.of_type("aws:autoscaling/group:Group")}
    alarms = {a.name: a for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")}
    policies = {p.name: p for p in graph.of_type("aws:autoscaling/policy:Policy")}
    for region in ("us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"):
        burst, overflow = groups[f"chat-serve-{region}-burst"], groups[f"chat-serve-{region}-overflow"]
        assert "mixedInstancesPolicy" not in overflow.inputs  # on-demand, the template's (pinned) type
        assert overflow.inputs["minSize"] == 0 and overflow.inputs["maxSize"] == burst.inputs["maxSize"]
        assert overflow.inputs["instanceRefresh"]["strategy"] == "Rolling"
        assert "GroupPendingInstances" in burst.inputs["enabledMetrics"]
        short = alarms[f"chat-serve-{region}-replicas-spot-short"]
        assert (
            short.inputs["evaluationPeriods"] == SPOT_SHORT_PERIODS
            and short.inputs["treatMissingData"] == "notBreaching"
        )
        signal = next(q for q in short.inputs["metricQueries"] if q.get("returnData"))
        assert signal["expression"] == "FILL(burstdesired, 0) - FILL(burstinservice, 0) - FILL(burstpending, 0)"
        assert short.inputs["threshold"] == 0.5 and short.inputs["comparisonOperator"] == "GreaterThanThreshold"
        take = policies[f"chat-serve-{region}-replicas-overflow-take"]
        give = policies[f"chat-serve-{region}-replicas-burst-give"]
        assert take.inputs["autoscalingGroupName"] == overflow.inputs["name"]
        assert give.inputs["autoscalingGroupName"] == burst.inputs["name"]
        assert [a["scalingAdjustment"] for a in take.inputs["stepAdjustments"]] == [1]
        assert [a["scalingAdjustment"] for a in give.inputs["stepAdjustments"]] == [-1]
        assert take.inputs["estimatedInstanceWarmup"] == 0  # both halves apply at every invocation
        actions = short.inputs["alarmActions"]
        assert (
            len(actions) == 2 and any("overflow-take" in a for a in actions) and any("burst-give" in a for a in actions)
        )
        # Spot is removed only once the overflow group is empty, the base once both are.
        burst_in = alarms[f"chat-serve-{region}-replicas-burst-in"]
        signal = next(q for q in burst_in.inputs["metricQueries"] if q.get("returnData"))
        assert signal["expression"].startswith("IF(FILL(overflowdesired, 0) == 0, ")
        base_in = alarms[f"chat-serve-{region}-replicas-base-in"]
        signal = next(q for q in base_in.inputs["metricQueries"] if q.get("returnData"))
        assert signal["expression"].startswith("IF(FILL(burstdesired, 0) + FILL(overflowdesired, 0) == 0, ")


def test_a_rate_limit_per_api_key_counts_every_ip_of_one_key() -> None:
    """access.waf.rate_limit_per_key: a rate-based rule aggregated on the Authorization header (review #26;
    AWS WAF DG, rate-based rule custom aggregation keys), judged by preflight against botocore's wafv2 model."""
    import botocore.session
    from gpuinfra.catalog import load_catalog
    from gpuinfra.preflight import preflight
    from helpers import graph_for

    graph = graph_for("chat-serve", {"access.waf.rate_limit_per_key": 3000})
    acls = graph.of_type("aws:wafv2/webAcl:WebAcl")
    assert len(acls) == 4
    for acl in acls:
        rules = {r["name"]: r for r in acl.inputs["rules"]}
        rate = rules["rate-per-key"]["statement"]["rateBasedStatement"]
        assert rate["limit"] == 3000 and rate["aggregateKeyType"] == "CUSTOM_KEYS"
        assert rate["customKeys"] == [
            {"header": {"name": "authorization", "textTransformations": [{"priority": 0, "type": "NONE"}]}}
        ]
        assert "block" in rules["rate-per-key"]["action"]
        # WAF refuses two rules of one ACL at the same priority.
        priorities = [r["priority"] for r in acl.inputs["rules"]]
        assert len(set(priorities)) == len(priorities)
    wafv2 = botocore.session.get_session().get_service_model("wafv2")
    assert "CUSTOM_KEYS" in wafv2.shape_for("RateBasedStatementAggregateKeyType").enum
    assert "NONE" in wafv2.shape_for("TextTransformationType").enum
    findings = [f for f in preflight(graph, load_catalog()) if f.urn in {a.urn for a in acls}]
    assert findings == [], [(f.rule, f.path, f.message) for f in findings]
    # ... and preflight does read the key: a transformation WAF does not know is refused at its path.
    import copy
    from dataclasses import replace

    from gpuinfra.graph import Graph

    inputs = copy.deepcopy(acls[0].inputs)
    inputs["rules"][1]["statement"]["rateBasedStatement"]["customKeys"][0]["header"]["textTransformations"][0][
        "type"
    ] = "SHOUT"
    bad = Graph.of(
        graph.stack, graph.project, [replace(r, inputs=inputs) if r.urn == acls[0].urn else r for r in graph.resources]
    )
    paths = {f.path for f in preflight(bad, load_catalog()) if f.urn == acls[0].urn and f.rule == "PF-AWS-API"}
    assert paths == {"rules[1].statement.rateBasedStatement.customKeys[0].header.textTransformations[0].type"}
    # Off by default; the example sets it (3,000 a key, 6,000 an address, in 5 minutes).
    default = graph_for("chat-serve", {"access.waf.rate_limit_per_key": None})
    for acl in default.of_type("aws:wafv2/webAcl:WebAcl"):
        assert "rate-per-key" not in {r["name"] for r in acl.inputs["rules"]}
    for acl in example_graph("chat-serve").of_type("aws:wafv2/webAcl:WebAcl"):
        rules = {r["name"]: r for r in acl.inputs["rules"]}
        assert rules["rate-per-key"]["statement"]["rateBasedStatement"]["limit"] == 3000
        assert rules["rate-per-ip"]["statement"]["rateBasedStatement"]["limit"] == 6000
