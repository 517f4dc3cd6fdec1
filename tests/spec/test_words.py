"""The value types that reach generated files (spec/words.py), held as properties over every field of every example
spec and of the organization file that has one: whatever text hypothesis writes there, the stack is either refused
with an input error (exit 2, never a traceback) or the value keeps the type's promise: an S3 key that is a normal
relative path (PurePosixPath: not absolute, no empty, `.` or `..` segment), a Slurm token the `slurm` filter takes,
a Kubernetes label value, a Prometheus metric name, a pinned EC2 image whose SSM version the program reads as a
number."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import pytest
from gpuinfra.errors import InputError
from gpuinfra.pulumi.components.training.slurm_pcs import ssm_image
from gpuinfra.spec import SPEC_MODELS, Organization
from gpuinfra.spec.org import RegistryPrefix
from gpuinfra.spec.words import (
    K8sLabelValue,
    KeyPrefix,
    PinnedImage,
    PromMetricName,
    S3Uri,
    SlurmValue,
    relative_key,
)
from gpuinfra.templating import slurm_value
from helpers import example_data, inputs_for, org_data, workload_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

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
]


def _key_ok(key: str) -> bool:
    body = key.rstrip("/")
    parts = body.split("/") if body else []
    return (
        not key.startswith("/")
        and all(p not in ("", ".", "..") for p in parts)
        and str(PurePosixPath(body))
        in (
            body,
            ".",
        )
    )


def _s3_ok(uri: str) -> bool:
    key = uri.removeprefix("s3://").partition("/")[2]
    return uri.startswith("s3://") and _key_ok(key) and re.fullmatch(r"[A-Za-z0-9._=+@,/-]*", key) is not None


def _slurm_ok(value: str) -> bool:
    return slurm_value(value) == value


PROMISES: dict[Any, Any] = {
    KeyPrefix: lambda v: _key_ok(v) and v.endswith("/"),
    RegistryPrefix: lambda v: _key_ok(v) and v.endswith("/"),
    S3Uri: _s3_ok,
    SlurmValue: _slurm_ok,
    K8sLabelValue: lambda v: re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", v) and len(v) <= 63,
    PromMetricName: lambda v: re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", v) is not None,
    PinnedImage: lambda v: (
        re.fullmatch(r"ami-[0-9a-f]{8,17}|resolve:ssm:/[A-Za-z0-9_./-]+:[0-9]+", v) is not None
        and (not v.startswith("resolve:ssm:") or ssm_image(v) is not None)
    ),
}


def _kind(annotation: Any) -> Any:
    """The word type of a field (through Optional and list), or None."""
    for t in PROMISES:
        if annotation == t:
            return t
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, list) or str(origin) == "<class 'types.UnionType'>":
        for arg in typing.get_args(annotation):
            found = _kind(arg)
            if found is not None:
                return found
    return None


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def word_fields(model: type[BaseModel], data: Any, prefix: str = "") -> Iterator[tuple[str, Any, bool]]:
    """(dotted path, word type, is a list) for every word-typed field the example `data` reaches."""
    hints = typing.get_type_hints(model, include_extras=True)
    for name, field in model.model_fields.items():
        key, annotation = field.alias or name, hints[name]
        value = data.get(key) if isinstance(data, dict) else None
        kind = _kind(annotation)
        if kind is not None:
            yield f"{prefix}{key}", kind, isinstance(value, list) or typing.get_origin(annotation) is list
            continue
        for sub in _models(annotation):
            if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()) and value and sub:
                first = next(iter(value))
                if set(value[first]) <= set(sub.model_fields) | {f.alias for f in sub.model_fields.values()}:
                    yield from word_fields(sub, value[first], f"{prefix}{key}.{first}.")
                    continue
            if isinstance(value, dict):
                yield from word_fields(sub, value, f"{prefix}{key}.")
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                yield from word_fields(sub, value[0], f"{prefix}{key}[0].")


SPEC_CASES = [
    (stack, path, kind, many)
    for stack in STACKS
    for path, kind, many in word_fields(
        MODELS[workload_of(stack)], example_data(stack)["config"][f"gpuinfra:{workload_of(stack)}"]
    )
]
ORG_CASES = [("chat-serve", path, kind, many) for path, kind, many in word_fields(Organization, org_data())]

ALPHABET = st.sampled_from([*"ab9/._-$`'\"\n *:=+@,\\~", "..", "../", "/..", "//", "\u2028", "é"])
TEXT = st.lists(ALPHABET, max_size=14).map("".join)


def _value(kind: Any, draw_text: str) -> str:
    """Hostile text in the field's own shape, so the field's pattern does not refuse it all at once."""
    if kind is S3Uri:
        return "s3://acme-bucket/" + draw_text
    if kind in (KeyPrefix, RegistryPrefix):
        return draw_text + "/"
    if kind is PinnedImage:
        return "resolve:ssm:/acme/ami" + draw_text
    return draw_text


def _check(stack: str, path: str, kind: Any, many: bool, text: str, org: bool) -> None:
    value = _value(kind, text)
    mutation = {path: [value] if many else value}
    try:
        inputs_for(stack, org=mutation) if org else inputs_for(stack, mutation)
    except (InputError, ValidationError):  # the test helper validates a mutated organization without the reader
        return  # refused: exit 2 with the field named
    assert PROMISES[kind](value), f"{path} accepted {value!r}"


@pytest.mark.parametrize(("stack", "path", "kind", "many"), SPEC_CASES, ids=[f"{c[0]}:{c[1]}" for c in SPEC_CASES])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_a_spec_word_is_refused_or_keeps_its_promise(stack: str, path: str, kind: Any, many: bool, text: str) -> None:
    _check(stack, path, kind, many, text, org=False)


@pytest.mark.parametrize(("stack", "path", "kind", "many"), ORG_CASES, ids=[f"org:{c[1]}" for c in ORG_CASES])
@settings(max_examples=40, deadline=None)
@given(text=TEXT)
def test_an_organization_word_is_refused_or_keeps_its_promise(
    stack: str, path: str, kind: Any, many: bool, text: str
) -> None:
    _check(stack, path, kind, many, text, org=True)


def test_every_kind_of_word_is_swept() -> None:
    """Not vacuous: each type has a field in the examples, and the issue's fields are among them."""
    kinds = {kind for _, _, kind, _ in SPEC_CASES + ORG_CASES}
    assert kinds == set(PROMISES)
    paths = {f"{s}:{p}" for s, p, _, _ in SPEC_CASES}
    for wanted in (
        "chat-serve:model.weights_prefix",
        "llm-train:lustre.export_path",
        "llm-finetune:adapter_prefix",
        "corpus-prep:image_id",
    ):
        assert wanted in paths, sorted(paths)


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("llama/../../../../../etc/", "a '..' segment"),
        ("../etc/", "a '..' segment"),
        ("llama/./v3/", "a '.' segment"),
        ("llama//v3/", "an empty segment"),
        ("/etc/", "starts with '/'"),
    ],
)
def test_a_key_that_leaves_its_folder_is_refused_with_the_reason(key: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        relative_key(key)


def test_the_issue_s_weights_prefix_is_refused_at_the_field() -> None:
    with pytest.raises(InputError) as caught:
        inputs_for("chat-serve", {"model.weights_prefix": "llama/../../../../../etc/"})
    assert "model.weights_prefix" in str(caught.value) and "'..' segment" in str(caught.value)


def test_an_export_path_with_a_command_is_refused_at_the_field() -> None:
    with pytest.raises(InputError) as caught:
        inputs_for("llm-train", {"lustre.export_path": "s3://acme-ckpt/checkpoints/$(touch x)/"})
    assert "lustre.export_path" in str(caught.value)


def test_a_dataprep_image_with_a_command_is_refused_at_the_field() -> None:
    """It reached the program, whose int() of the SSM version failed: preview exited 1 with a `pulumi-program`
    finding ("invalid literal for int()") naming neither the file nor the field."""
    with pytest.raises(InputError) as caught:
        inputs_for("corpus-prep", {"image_id": "resolve:ssm:/acme/pcs/cpu-ami:3$(touch x)"})
    assert "image_id" in str(caught.value)
