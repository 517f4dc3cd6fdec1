"""What the golden files hold: renders a reviewer reads as text (the node bootstrap user data, the JobSet a
user submits, the pull-request Markdown), each produced from an unmutated example the way the tool produces it."""

from __future__ import annotations

import base64
from collections.abc import Callable

from gpuinfra.graph import Graph
from gpuinfra.templating import unpacked
from helpers import example_graph


def _one(graph: Graph, kind: str, name: str) -> dict:  # type: ignore[type-arg]
    (found,) = [r for r in graph.resources if r.type == kind and r.name == name]
    return found.inputs


def user_data(stack: str, template: str) -> Callable[[], str]:
    """A launch template's user data, decoded (EC2 takes it base64-encoded), with write_files entries packed as
    gz+b64 shown unpacked, so a script's change reads as a text diff."""

    def render() -> str:
        inputs = _one(example_graph(stack), "aws:ec2/launchTemplate:LaunchTemplate", template)
        return unpacked(base64.b64decode(inputs["userData"]).decode())

    return render


def jobset(stack: str) -> Callable[[], str]:
    """The JobSet template the training stack leaves in its ConfigMap for `kubectl create -f`."""

    def render() -> str:
        graph = example_graph(stack)
        (found,) = [
            r
            for r in graph.resources
            if r.type == "kubernetes:core/v1:ConfigMap" and "jobset.yaml" in r.inputs.get("data", {})
        ]
        return str(found.inputs["data"]["jobset.yaml"])

    return render


def preview_markdown(stack: str) -> Callable[[], str]:
    """`gpuinfra preview STACK --format markdown`, as the pull-request comment shows it."""

    def render() -> str:
        from helpers import gpuinfra

        result = gpuinfra("preview", stack, "--format", "markdown")
        assert result.returncode == 0, result.stderr
        return result.stdout

    return render


GOLDENS: dict[str, Callable[[], str]] = {
    "user-data-llm-train-od.mime": user_data("llm-train", "llm-train-slurm-pcs-od-lt"),
    "user-data-chat-serve-us-east-1.yaml": user_data("chat-serve", "chat-serve-us-east-1-replicas-lt"),
    "jobset-llm-train-eks.yaml": jobset("llm-train-eks"),
    "user-data-llm-train-eks-gpu.mime": user_data("llm-train-eks", "llm-train-eks-eks-gpu-lt"),
    "preview-llm-train.md": preview_markdown("llm-train"),
    "preview-llm-train-gcp.md": preview_markdown("llm-train-gcp"),
}
"""Golden file name (under tests/goldens/files/) -> its producer."""
