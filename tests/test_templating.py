"""Every value enters a generated file through one filter for its kind of file, and stays one value there.

- Shell templates (`*.sh.j2`, `*.sbatch.j2`): `sh` (one shell word) in code and comments, `slurm` in `#SBATCH` lines,
  `int` inside `$(( ))`; never inside double quotes, single quotes, `${...}` or a here-document, where a quoted word
  is not one word. The contexts are read from each template the way bash reads it (tests/template_contexts.py).
- YAML templates (`*.yaml.j2`: cloud-config, the JobSet, the `init` stack files): `yaml` (a plain or JSON-quoted
  scalar), `tojson` or `packed` (base64) for a whole scalar; `line` in a comment.
- Python templates (`*.py.j2`: the on-premises GPU remediator): `py` (a Python literal), and only as the whole
  value of a top-level constant (`NAME = {{ v | py }}`); never inside a string or the docstring.
- Markdown report templates (`report/*.md.j2`) render the report model, whose text the Markdown renderer escapes
  itself (report/render/markdown.py); they reach no shell or YAML reader and are outside this rule.

Then the filters are held to what they promise: a `sh` word read back by bash is the value byte for byte (and a
comment holding one stays a comment), a `yaml` scalar read back by PyYAML (cloud-init's reader) and ruamel is the
value; and the two scripts a hostile spec string used to reach as root, the checkpoint pruner and the replica's
prefetch, are executed with a marker payload in every value: the marker is never created."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest
import yaml as pyyaml
from gpuinfra.catalog import load_catalog
from gpuinfra.pulumi.components.inference.bootstrap import ServerConfig, render_scripts
from gpuinfra.pulumi.components.training.bootstrap import Retention, prune_checkpoints
from gpuinfra.templating import (
    environment,
    one_line,
    python_literal,
    shell_quote,
    slurm_value,
    templates_folder,
    yaml_scalar,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from slurm_local import SYSTEMD_PATH
from template_contexts import python_expressions, shell_expressions, yaml_expressions

SHELL_FILTERS = {"word": "sh", "comment": "sh", "sbatch": "slurm", "arith": "int"}
YAML_FILTERS = {
    "plain": {"yaml", "tojson", "packed"},
    "block": {"yaml", "tojson"},
    "comment": {"line", "yaml"},
    "double": {"packed"},  # base64 holds no quote or backslash
}
MARKDOWN = "report"


def _templates(*suffixes: str) -> list[Path]:
    return sorted(p for p in templates_folder().rglob("*.j2") if p.name.endswith(suffixes))


def shell_problems(source: str) -> list[str]:
    problems = []
    for e in shell_expressions(environment(), source):
        want = SHELL_FILTERS.get(e.context)
        if want is None:
            problems.append(f"line {e.line}: {{{{ {e.source} }}}} is inside {e.context}: quoting cannot hold there")
        elif e.last_filter != want:
            problems.append(f"line {e.line}: {{{{ {e.source} }}}} in {e.context} must end with | {want}")
    return problems


def yaml_problems(source: str) -> list[str]:
    problems = []
    for e in yaml_expressions(environment(), source):
        allowed = YAML_FILTERS.get(e.context, set())
        if e.last_filter not in allowed:
            what = f"end with one of {sorted(allowed)}" if allowed else "not stand there (a whole scalar only)"
            problems.append(f"line {e.line}: {{{{ {e.source} }}}} in {e.context} must {what}")
    return problems


def python_problems(source: str) -> list[str]:
    problems = []
    for e in python_expressions(environment(), source):
        if e.context != "constant":
            problems.append(f"line {e.line}: {{{{ {e.source} }}}} must be a whole constant's value (NAME = ...)")
        elif e.last_filter != "py":
            problems.append(f"line {e.line}: {{{{ {e.source} }}}} in a constant must end with | py")
    return problems


# ---- the scan ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", _templates(".sh.j2", ".sbatch.j2"), ids=lambda p: p.name)
def test_every_shell_template_interpolates_only_shell_words(path: Path) -> None:
    assert shell_problems(path.read_text()) == []


@pytest.mark.parametrize("path", _templates(".yaml.j2"), ids=lambda p: p.name)
def test_every_yaml_template_interpolates_only_whole_scalars(path: Path) -> None:
    assert yaml_problems(path.read_text()) == []


@pytest.mark.parametrize("path", _templates(".py.j2"), ids=lambda p: p.name)
def test_every_python_template_interpolates_only_literal_constants(path: Path) -> None:
    assert python_problems(path.read_text()) == []


def test_every_template_is_under_a_rule_and_the_scan_is_not_vacuous() -> None:
    every = {p for p in templates_folder().rglob("*.j2")}
    shell, data = set(_templates(".sh.j2", ".sbatch.j2")), set(_templates(".yaml.j2"))
    python = set(_templates(".py.j2"))
    markdown = {p for p in every if p.parent.name == MARKDOWN and p.name.endswith(".md.j2")}
    assert every == shell | data | python | markdown
    counted = sum(len(shell_expressions(environment(), p.read_text())) for p in shell)
    assert counted > 200  # 211 expressions in 23 shell templates when this was written


PLANTED_SHELL = [
    ("x={{ v }}", "must end with | sh"),
    ('echo "{{ v | sh }}"', "inside double"),
    ("echo '{{ v | sh }}'", "inside single"),
    ('x="${A:-{{ v | sh }}}"', "inside param"),
    ("cat <<EOF\n{{ v | sh }}\nEOF", "inside heredoc"),
    ("cat <<'EOF'\n{{ v | sh }}\nEOF", "inside heredoc"),
    ("n=$(( 1 + {{ v | sh }} ))", "must end with | int"),
    ('x={{ v | sh ~ "y" }}', "must end with | sh"),
    ('x={{ "a" if c else v | sh }}', "must end with | sh"),
    ("#SBATCH --partition={{ v | sh }}", "must end with | slurm"),
    ("x=`{{ v }}`", "must end with | sh"),
]
ALLOWED_SHELL = [
    "# {{ v | sh }}",
    "x={{ v | sh }}",
    'x="$(basename {{ v | sh }})"',
    "x=s3://{{ a | sh }}/{{ b | sh }}",
    "#SBATCH --nodes={{ n | slurm }}",
    "n=$(( 1 + {{ v | int }} ))",
    'cut -d: -f3 <<<"$x"\nroot={{ v | sh }}',
    "{{ args | sh }}",
]


@pytest.mark.parametrize(("source", "problem"), PLANTED_SHELL)
def test_the_shell_scan_catches_a_planted_mistake(source: str, problem: str) -> None:
    found = shell_problems(source)
    assert len(found) == 1 and problem in found[0], found


@pytest.mark.parametrize("source", ALLOWED_SHELL)
def test_the_shell_scan_passes_a_quoted_word(source: str) -> None:
    assert shell_problems(source) == []


PLANTED_YAML = [
    ("key: {{ v }}", "must end with one of"),
    ('key: "{{ v | yaml }}"', "in double"),
    ("key: s3://{{ v | yaml }}/x", "in partial"),
    ("key: |\n  line {{ v | line }}", "in block"),
    ("# {{ v }}", "in comment"),
]


@pytest.mark.parametrize(("source", "problem"), PLANTED_YAML)
def test_the_yaml_scan_catches_a_planted_mistake(source: str, problem: str) -> None:
    found = yaml_problems(source)
    assert len(found) == 1 and problem in found[0], found


@pytest.mark.parametrize(
    "source",
    ["key: {{ v | yaml }}  # x", "- [{{ a | yaml }}, b]", "{{ k | yaml }}: {{ v | tojson }}", "# {{ v | line }}"],
)
def test_the_yaml_scan_passes_a_whole_scalar(source: str) -> None:
    assert yaml_problems(source) == []


PLANTED_PYTHON = [
    ('X = "{{ v | py }}"', "whole constant"),
    ("X = {{ v }}", "must end with | py"),
    ("X = {{ v | tojson }}", "must end with | py"),
    ('"""Remediation for {{ v | py }}."""', "whole constant"),
    ("X = f({{ v | py }})", "whole constant"),
    ("X = {{ v | py }}  # {{ w | py }}", "whole constant"),
]


@pytest.mark.parametrize(("source", "problem"), PLANTED_PYTHON)
def test_the_python_scan_catches_a_planted_mistake(source: str, problem: str) -> None:
    found = python_problems(source)
    assert found and all(problem in p for p in found), found


def test_the_python_scan_passes_a_json_constant() -> None:
    assert python_problems("X = {{ v | py }}\nMAX_N = {{ n | py }}\n") == []


# ---- the filters, read back by their readers ---------------------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
HOSTILE = "x$(touch MARK)`touch MARK`;touch MARK\ntouch MARK 'q\"y\\ \t\r\x1b\u2028é"


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_a_sh_word_reads_back_as_the_value_and_a_comment_stays_one(values: list[str]) -> None:
    script = "\n".join(
        ["set -eu", *(f"# {shell_quote(v)}" for v in values), f"printf '%s\\0' {shell_quote(values)}", ""]
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, timeout=10)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"".join(v.encode() + b"\0" for v in values)
    assert "\n" not in shell_quote(values)


def test_a_sh_word_of_the_hostile_value_is_one_literal_word(tmp_path: Path) -> None:
    value = HOSTILE.replace("MARK", str(tmp_path / "marker"))
    out = subprocess.run(["bash", "-c", f"# {shell_quote(value)}\nprintf %s {shell_quote(value)}"], capture_output=True)
    assert out.stdout.decode() == value and not (tmp_path / "marker").exists()


@settings(max_examples=100, deadline=None)
@given(st.one_of(TEXT, st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False)))
def test_a_yaml_scalar_reads_back_as_the_value(value: object) -> None:
    scalar = yaml_scalar(value)
    document = f"# {one_line(value)}\nkey: {scalar}\nflow: [{scalar}, x]\nmap: {{k: {scalar}}}\n"
    for read in (pyyaml.safe_load, YAML(typ="safe", pure=True).load):
        data = read(document)
        assert data == {"key": value, "flow": [value, "x"], "map": {"k": value}}, document


@settings(max_examples=100, deadline=None)
@given(st.one_of(TEXT, st.integers(), st.booleans(), st.lists(TEXT, max_size=4)))
def test_a_py_constant_reads_back_as_the_python_value_on_one_line(value: object) -> None:
    text = environment().from_string("X = {{ v | py }}").render(v=value)
    (statement,) = ast.parse(text).body
    assert "\n" not in text and ast.literal_eval(statement.value) == value, text  # type: ignore[attr-defined]


def test_the_py_filter_refuses_what_is_no_literal() -> None:
    with pytest.raises(ValueError, match="not a Python literal"):
        python_literal(object())


# ---- the root scripts, executed with a marker payload -----------------------------------------------------------
def _bin(tmp_path: Path, name: str, body: str) -> None:
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/bash\n{body}")
    path.chmod(0o755)


def _calls(path: Path) -> list[list[str]]:
    """The fake CLI's calls, each its argv (NUL-separated words, a record per call)."""
    text = path.read_bytes().decode() if path.exists() else ""
    return [c.split("\0")[:-1] for c in text.split("\x1e")[:-1]]


RECORD = 'for a in "$@"; do printf \'%s\\0\' "$a"; done >> {calls}; printf "\\036" >> {calls}\n'


def test_the_pruner_keeps_a_hostile_bucket_prefix_and_root_inert(tmp_path: Path) -> None:
    """The pruner sets PATH itself (systemd's default), so its aws is the one in /usr/local/bin: a private mount
    namespace puts the fake there, as the tagging test of test_prune_checkpoints.py does."""
    if os.geteuid() != 0:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root for a private mount namespace")
    marker = tmp_path / "marker"
    hostile = HOSTILE.replace("MARK", str(marker))
    root = tmp_path / "ckpt $(touch marker) `touch marker` 'q\"y"  # run from tmp_path: would create the marker
    for step in (1, 2, 3):
        (root / "run" / f"step-{step}").mkdir(parents=True)
        (root / "run" / f"step-{step}" / "COMPLETE").write_text("")
        os.utime(root / "run" / f"step-{step}" / "COMPLETE", (1000 + step, 1000 + step))
    calls = tmp_path / "aws-calls"
    _bin(tmp_path, "aws", RECORD.format(calls=calls))
    script = prune_checkpoints(hostile, Retention(str(root), hostile, hostile + "/", 2, hostile, 14))
    path = tmp_path / "prune"
    path.write_text(script)
    path.chmod(0o755)
    mount = "mount --make-rprivate / && mount -t tmpfs gpuinfra-test /usr/local/bin"
    command = [
        "unshare",
        "--mount",
        "/bin/sh",
        "-c",
        f'{mount} && cp {tmp_path}/bin/aws /usr/local/bin/ && exec "$@"',
        "sh",
        "/usr/bin/env",
        "-i",
        f"PATH={SYSTEMD_PATH}",
        str(path),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert not marker.exists(), "a hostile value ran as a command"
    assert result.returncode == 0, result.stderr
    listed = [c for c in _calls(calls) if "list-objects-v2" in c]
    assert listed and listed[0][listed[0].index("--bucket") + 1] == hostile
    assert listed[0][listed[0].index("--prefix") + 1] == f"{hostile}/run/step-1/"
    assert sorted(p.name for p in (root / "run").iterdir()) == ["step-2", "step-3"]


def test_the_prefetch_keeps_hostile_names_and_prefixes_inert(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    hostile = HOSTILE.replace("MARK", str(marker))
    calls = tmp_path / "aws-calls"
    manifest = '{"files": []}'
    _bin(
        tmp_path,
        "aws",
        RECORD.format(calls=calls) + f'[ "$2" = cp ] && printf %s {shell_quote(manifest)} > "$4"\nexit 0\n',
    )
    _bin(tmp_path, "docker", "exit 0\n")
    server = ServerConfig(
        fleet=hostile,
        region=hostile,
        instance_type=hostile,
        bucket=hostile,
        model_prefix=hostile + "/",
        weights_prefix=hostile + "/w/",
        image=hostile,
        server_port=8000,
        engine_args=(hostile,),
        max_sequences=4,
        engine=load_catalog().engine("vllm"),
        launch_heartbeat_seconds=60,
        launch_deadline_seconds=600,
        adapters=((hostile, hostile + "/a/"),),
    )
    script = render_scripts(server)["prefetch"]
    state = tmp_path / "state"
    env = {"PATH": f"{tmp_path}/bin:/usr/bin:/bin", "STATE_DIRECTORY": str(state), "HOME": str(tmp_path)}
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert not marker.exists(), "a hostile value ran as a command"
    assert result.returncode == 0, result.stderr
    copies = [c for c in _calls(calls) if c[:2] == ["s3", "cp"]]
    assert [c[2] for c in copies] == [
        f"s3://{hostile}/{hostile}/{hostile}/w/manifest.json",
        f"s3://{hostile}/{hostile}/{hostile}/a/manifest.json",
    ]
    assert (state / "weights" / hostile / "w" / ".verified").is_file()
    assert (state / "adapters" / hostile / ".verified").is_file()


@pytest.mark.parametrize("value", ["A\n", "train\n", "/data\n"])
def test_a_trailing_line_break_is_never_a_plain_word(value: str) -> None:
    # Python's `$` also matches before a final line break: a pattern checked with .match let "A\n" through as a
    # plain YAML scalar (read back as "A") and as one #SBATCH token (a line break inside a directive).
    assert pyyaml.safe_load(f"key: {yaml_scalar(value)}\n") == {"key": value}
    with pytest.raises(ValueError, match="not a plain Slurm value"):
        slurm_value(value)
