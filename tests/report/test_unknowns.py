"""Preview shows what only `pulumi up` (or a cloud read) knows as unknown, never the engine's stand-ins: an
autonamed name, an id, or an AMI an SSM parameter names (issue 29, "preview shows unknowns as unknown")."""

from __future__ import annotations

import pytest
from helpers import EXAMPLES, example_graph, gpuinfra


@pytest.mark.parametrize("stack", EXAMPLES)
def test_no_stand_in_reaches_the_preview_a_person_reads(stack: str) -> None:
    graph = example_graph(stack)
    assert graph.after_apply, "the engine records its stand-ins"
    result = gpuinfra("preview", stack, "--format", "markdown")  # the same cells as the terminal table
    shown = [value for value in graph.after_apply if value in result.stdout]
    assert not shown, f"stand-ins shown as real values: {shown[:5]}"


def test_the_pinned_image_is_shown_as_read_at_deploy() -> None:
    """llm-train pins `image_id: resolve:ssm:/acme/pcs/slurm-25.05/gpu-ami:7`; PCS takes an AMI id, which the
    program reads from that parameter version at deploy."""
    result = gpuinfra("preview", "llm-train", "--format", "markdown")
    assert "(read at deploy from SSM /acme/pcs/slurm-25.05/gpu-ami:7)" in result.stdout
    assert "llm-train-slurm-pg-&lt;random&gt; (autonamed at apply)" in result.stdout
