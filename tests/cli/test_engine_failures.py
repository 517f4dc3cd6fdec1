"""An engine failure is one finding naming the resource whose code raised, and a failed run leaves nothing
behind: no "Future exception was never retrieved" reports spill into the next stack's output."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from gpuinfra.commands.preview import engine_failure
from gpuinfra.pulumi.engine import EngineError, run
from helpers import example_graph


class Broken(pulumi.ComponentResource):
    """A component whose own code fails after registering children (the unretrieved futures of a failed run)."""

    def __init__(self, name: str) -> None:
        super().__init__("test:index:Broken", name)
        provider = aws.Provider(f"{name}-aws", region="us-east-1", opts=pulumi.ResourceOptions(parent=self))
        failing = pulumi.Output.from_input("x").apply(_fail)
        for i in range(20):  # each waits on an output that fails: futures whose exceptions nobody retrieves
            aws.s3.BucketV2(f"{name}-b{i}", bucket=failing, opts=pulumi.ResourceOptions(parent=self, provider=provider))
        raise RuntimeError("component code failed")


def _fail(value: str) -> str:
    raise ValueError(f"cannot derive a bucket name from {value}")


def test_a_failure_names_the_resource_and_leaks_nothing(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(EngineError) as failed:
        run(lambda: Broken("cluster"), project="p", stack="s", config={})
    finding = engine_failure(str(failed.value))
    assert "'cluster-b" in finding.message and "cannot derive a bucket name from x" in finding.message
    assert "\n" not in finding.message and " object at 0x" not in finding.message, finding.message
    del failed  # the error's traceback held the failed run's futures: freeing it frees them
    gc.collect()
    example_graph("model-registry")  # the next stack runs clean
    gc.collect()
    _, err = capfd.readouterr()
    assert "never retrieved" not in err and "Traceback" not in err, err
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_nothing_of_a_failed_run_reaches_stderr_until_the_process_ends() -> None:
    """The failed run's futures may live until the interpreter exits: asyncio reports them whenever they are
    freed, so the whole process's stderr is checked, not just the next run's."""
    script = (
        "import pytest\n"
        "from test_engine_failures import Broken\n"
        "from helpers import example_graph\n"
        "from gpuinfra.pulumi.engine import EngineError, run\n"
        "try:\n"
        "    run(lambda: Broken('cluster'), project='p', stack='s', config={})\n"
        "except EngineError as exc:\n"
        "    print('failed:', str(exc)[:60])\n"
        "example_graph('model-registry')\n"
        "print('next stack ran')\n"
    )
    here = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "failed: the Pulumi program failed" in done.stdout and "next stack ran" in done.stdout
    assert "never retrieved" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
