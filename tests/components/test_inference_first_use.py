"""First use: every region's API key has a value from the first `pulumi up`; the launch hook's timeout comes
from the planned cold start plus a documented margin; containers cannot reach the instance role."""

from __future__ import annotations

from gpuinfra.catalog import load_catalog
from gpuinfra.plan.inference import plan_inference
from gpuinfra.pulumi.components.inference.replicas import HOOK_MARGIN_SECONDS, LAUNCH_DEADLINE_FACTOR
from gpuinfra.templating import unpacked
from helpers import example_graph, inputs_for

SECRET = "aws:secretsmanager/secret:Secret"
VERSION = "aws:secretsmanager/secretVersion:SecretVersion"


def test_every_api_key_gets_a_generated_value() -> None:
    """GetSecretValue on a secret with no AWSCURRENT version fails (ResourceNotFoundException): each region's
    key is created with a version whose value is a generated password, kept secret in the state."""
    graph = example_graph("chat-serve")
    secrets = {s.name: s for s in graph.of_type(SECRET) if s.name.endswith("-api-key")}  # not the registry credentials
    versions = graph.of_type(VERSION)
    assert len(secrets) == 4 and len(versions) == 4
    for version in versions:
        assert version.inputs["secretString"] == "[secret]"
        assert any(version.inputs["secretId"].startswith(name) for name in secrets)
    passwords = graph.of_type("random:index/randomPassword:RandomPassword")
    assert len(passwords) == 4 and all(p.inputs["length"] >= 32 for p in passwords)


def test_launch_hook_timeout_is_the_planned_cold_start_plus_the_margin() -> None:
    graph = example_graph("chat-serve")
    inputs = inputs_for("chat-serve")
    plan = plan_inference(inputs.spec, inputs.org.org, load_catalog())  # type: ignore[arg-type]
    cold = {rp.region: rp.cold_start_seconds for rp in plan.regions}
    for group in graph.of_type("aws:autoscaling/group:Group"):
        region = graph.provider_of(group).inputs["region"]  # type: ignore[union-attr]
        launch = next(h for h in group.inputs["initialLifecycleHooks"] if h["name"] == "launch")
        assert launch["heartbeatTimeout"] == int(cold[region]) + HOOK_MARGIN_SECONDS
        assert launch["defaultResult"] == "ABANDON"
    lt = graph.of_type("aws:ec2/launchTemplate:LaunchTemplate")[0]
    region = graph.provider_of(lt).inputs["region"]  # type: ignore[union-attr]
    import base64

    text = unpacked(base64.b64decode(lt.inputs["userData"]).decode())
    timeout = int(cold[region]) + HOOK_MARGIN_SECONDS
    assert f"heartbeat every {timeout // 3} s" in text  # three heartbeats per hook timeout
    assert f"past {LAUNCH_DEADLINE_FACTOR * int(cold[region]) + HOOK_MARGIN_SECONDS} s" in text


def test_containers_cannot_reach_the_instance_role() -> None:
    for lt in example_graph("chat-serve").of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        assert lt.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
