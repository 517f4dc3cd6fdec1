"""Issue 47: the root scripts a template renders run with a hostile value in every string they take, and the
payload never runs. The checkpoint pruner (a root timer on the login node, a root CronJob on Kubernetes) and the
inference prefetch (root, at every boot) are rendered straight from their templates with `$(...)`, backticks and
`;` in each string (bypassing the spec's types, which already refuse these: this holds the `| sh` quoting on its
own), then executed in a sandbox: a scratch folder, `aws` and `docker` as exported bash functions that log their
arguments (functions, since the scripts reset PATH). Each payload would create the file `pwned`; none may."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gpuinfra.templating import renderer

PAYLOAD = "$(touch pwned)`touch pwned`;touch pwned"
render = renderer()
STUBS = {
    # aws: log one argument per line; `s3 cp SRC DEST` of a manifest writes an empty one (no files to check).
    "BASH_FUNC_aws%%": '() { printf \'%s\\n\' "$@" >> "$SANDBOX/aws.argv"; '
    'if [ "$1 $2" = \'s3 cp\' ]; then printf \'{"files": []}\' > "$4"; fi; '
    'if [ "$2" = list-objects-v2 ]; then echo None; fi; return 0; }',
    "BASH_FUNC_docker%%": '() { printf \'%s\\n\' "$@" >> "$SANDBOX/docker.argv"; return 0; }',
}


def run(script: str, sandbox: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = sandbox / "script.sh"
    path.write_text(script)
    work = sandbox / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", f"SANDBOX={sandbox}", *(f"{k}={v}" for k, v in env.items()),
         *(f"{k}={v}" for k, v in STUBS.items()), "/bin/bash", str(path)],
        cwd=work, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def pwned(sandbox: Path) -> list[Path]:
    return [p for p in sandbox.rglob("pwned")]


def test_the_pruner_runs_hostile_strings_as_data(tmp_path: Path) -> None:
    root = tmp_path / f"checkpoints-{PAYLOAD.replace('/', '')}"
    complete = f"COMPLETE{PAYLOAD}"
    for step in (1, 2, 3):
        ckpt = root / f"run{PAYLOAD}" / f"step-{step}{PAYLOAD}"
        ckpt.mkdir(parents=True)
        (ckpt / complete).write_text("")
        subprocess.run(["touch", "-d", f"@{1000 + step}", str(ckpt / complete)], check=True)
    script = render(
        "training/prune-checkpoints.sh.j2",
        cluster=f"c{PAYLOAD}",
        checkpoint_dir=str(root),
        bucket=f"b{PAYLOAD}",
        prefix=f"p{PAYLOAD}/",
        keep_last=1,
        milestone_marker=f"M{PAYLOAD}",
        retention_days=7,
        complete_marker=complete,
        metric_namespace=f"ns{PAYLOAD}",
        region=f"r{PAYLOAD}",
        mount_check=None,  # the sandbox has no Lustre: the mount check has its own tests (test_mount_check.py)
    )
    done = run(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert pwned(tmp_path) == []
    left = sorted(p.name for p in (root / f"run{PAYLOAD}").iterdir())
    assert left == [f"step-3{PAYLOAD}"], left  # keep_last 1: the two older ones pruned, by their literal names
    argv = (tmp_path / "aws.argv").read_text().splitlines()
    assert f"b{PAYLOAD}" in argv and f"ns{PAYLOAD}" in argv and f"Cluster=c{PAYLOAD}" in argv, argv
    assert f"p{PAYLOAD}/run{PAYLOAD}/step-1{PAYLOAD}/" in argv  # the key: prefix + its path under the root


def test_the_prefetch_runs_hostile_strings_as_data(tmp_path: Path) -> None:
    state = tmp_path / "state"
    script = render(
        "inference/prefetch.sh.j2",
        fleet=f"f{PAYLOAD}",
        region=f"r{PAYLOAD}",
        bucket=f"b{PAYLOAD}",
        model_prefix=f"models{PAYLOAD}/",
        weights_prefix=f"llama{PAYLOAD}/",
        image_login=f"123.dkr.ecr{PAYLOAD}",
        image_ref=f"img{PAYLOAD}",
        adapters=[(f"a{PAYLOAD}", f"adapters{PAYLOAD}/")],
    )
    done = run(script, tmp_path, STATE_DIRECTORY=str(state))
    assert done.returncode == 0, done.stderr
    assert pwned(tmp_path) == []
    assert (state / "weights" / f"llama{PAYLOAD}" / ".verified").is_file()
    assert json.loads((state / "adapters" / f"a{PAYLOAD}" / ".verified").read_text()) == {"files": []}
    aws = (tmp_path / "aws.argv").read_text().splitlines()
    assert f"s3://b{PAYLOAD}/models{PAYLOAD}/llama{PAYLOAD}/manifest.json" in aws, aws
    assert f"img{PAYLOAD}" in (tmp_path / "docker.argv").read_text().splitlines()
