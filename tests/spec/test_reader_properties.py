"""Issue 32: a property test per reader. Hypothesis generates hostile values for the organization file, the
usage file, the policy configuration and the JSON documents `diff` and `cost` read (stack specs and YAML text
have theirs in test_fuzz.py); the only failure allowed is the project's InputError, which the CLI turns into
exit 2. Example counts are bounded so the whole file runs in seconds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.cost import Usage
from gpuinfra.cost.usage import load_usage_file
from gpuinfra.errors import InputError
from gpuinfra.policy.pack import pack_config
from gpuinfra.review.documents import load_document, side
from gpuinfra.spec import read_org
from helpers import field_paths, org_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
hostile_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["$(touch /tmp/pwn)", "`id`", "a;b", "\u0661\u0662", "1_6", "1e400", "NaN", "-0", "\ud800x"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(field_paths(data)))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = draw(values)
    return data


def dump_yaml(data: Any, path: Path) -> bool:
    """Write `data` as YAML; False when YAML itself cannot hold it (a lone surrogate), which is no reader's
    business: the property is about files that exist."""
    try:
        with path.open("w", encoding="utf-8") as stream:
            YAML().dump(data, stream)
    except (UnicodeEncodeError, ValueError, TypeError):
        return False
    return True


def must_read_or_refuse(read: Any) -> None:
    try:
        read()
    except InputError as exc:
        assert exc.render().strip()


@SETTINGS
@given(mutated(org_data()))
def test_the_organization_file_reads_or_refuses(tmp_path_factory: Any, data: Any) -> None:
    path = tmp_path_factory.mktemp("org") / "org.yaml"
    if dump_yaml(data, path):
        must_read_or_refuse(lambda: read_org(path))


USAGE = {
    "version": "0.1",
    "resource_type_default_usage": {"aws:s3/bucketV2:BucketV2": {"storage_gb": 100}},
    "resource_usage": {"llm-train-checkpoints": {"storage_gb": 2048, "monthly_requests": 1000}},
}


@SETTINGS
@given(mutated(USAGE))
def test_the_usage_file_reads_or_refuses(tmp_path_factory: Any, data: Any) -> None:
    path = tmp_path_factory.mktemp("usage") / "usage.yml"
    if dump_yaml(data, path):
        must_read_or_refuse(lambda: load_usage_file(path))


POLICY_CONFIG = {"all": "advisory", "budget-within-limit": {"enforcementLevel": "mandatory"}}


@SETTINGS
@given(st.one_of(mutated(POLICY_CONFIG), values))
def test_the_policy_configuration_reads_or_refuses(tmp_path_factory: Any, data: Any) -> None:
    path = tmp_path_factory.mktemp("policy") / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8", errors="surrogatepass")
    must_read_or_refuse(lambda: pack_config(path))


@SETTINGS
@given(st.binary(max_size=64))
def test_the_policy_configuration_bytes_read_or_refuse(tmp_path_factory: Any, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("policy") / "config.json"
    path.write_bytes(raw)
    must_read_or_refuse(lambda: pack_config(path))


PREVIEW = {
    "steps": [
        {
            "op": "create",
            "urn": "urn:pulumi:dev::p::aws:s3/bucketV2:BucketV2::b",
            "newState": {"type": "aws:s3/bucketV2:BucketV2", "inputs": {"bucket": "b"}},
        }
    ],
    "changeSummary": {"create": 1},
}


@SETTINGS
@given(st.one_of(mutated(PREVIEW), values))
def test_a_document_reads_or_refuses(tmp_path_factory: Any, data: Any) -> None:
    path = tmp_path_factory.mktemp("document") / "preview.json"
    path.write_text(json.dumps(data), encoding="utf-8", errors="surrogatepass")
    catalog = load_catalog()
    must_read_or_refuse(lambda: side(load_document(path), "head", catalog, Usage()))
