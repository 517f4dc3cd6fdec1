"""`--cache-dir`: each stack's preview kept by the content it reads (gpuinfra.commands.stack_cache), never changing
a result. The review built from previews with no cache, a cold cache, a warm one and a tampered entry is the same
byte for byte; a change to what a stack reads (its same-account siblings, the registry, the code) misses."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.commands import preview as preview_module
from gpuinfra.commands import stack_cache
from gpuinfra.commands.preview import PreviewRun, preview_run
from gpuinfra.cost import Usage
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.render import render
from gpuinfra.review.diff import diff_sides
from gpuinfra.review.documents import side
from gpuinfra.review.effects import replacements

ROOT = Path(__file__).resolve().parents[2]
REVIEWED = ["chat-serve", "model-registry"]
"""chat-serve reads the registry's graph (its weight-read flows): a stack that depends on another."""


def project(at: Path) -> Path:
    """A copy of the example project (its stacks and organization file) at `at`."""
    (at / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", at / "Pulumi.yaml")
    for path in (ROOT / "stacks").glob("*.yaml"):
        shutil.copy(path, at / "stacks" / path.name)
    return at


def grow(stacks: Path, name: str, old: str, new: str) -> None:
    path = stacks / f"Pulumi.{name}.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@dataclass(frozen=True)
class Reviews:
    folder: Path
    base_document: Path
    plain: PreviewRun


@pytest.fixture(scope="module")
def reviews(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reviews]:
    """The base: the examples as they are, previewed to a document. The head: chat-serve's first region's maximum
    changed (its Auto Scaling groups change)."""
    folder = project(tmp_path_factory.mktemp("stack-cache") / "repo")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        base_document = folder / "base.json"
        base_document.write_text(render(preview_run(REVIEWED).report, "json"))
        # Above failover n_plus_one's 26 (a cap below it changes nothing), within the quota grant.
        grow(folder / "stacks", "chat-serve", "max_replicas: 18", "max_replicas: 27")
        yield Reviews(folder, base_document, preview_run(REVIEWED))


def review(reviews: Reviews, head: PreviewRun) -> tuple[str, str, str]:
    """The review `diff --base-ref` makes of a base document and an in-memory head, in three formats."""
    catalog = load_catalog()
    from gpuinfra.review.documents import load_document

    base = side(load_document(reviews.base_document), "base", catalog, Usage())
    made = diff_report(diff_sides(base.stacks, head.snapshots, replacements()), "base", "head", catalog)
    return render(made, "json"), render(made, "markdown"), render(made, "table")


def outputs(reviews: Reviews, head: PreviewRun) -> tuple[str, ...]:
    return (render(head.report, "json"), render(head.report, "table"), *review(reviews, head))


def no_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("previewed a stack the cache holds")

    monkeypatch.setattr(preview_module, "built_stack", refuse)


def test_the_review_is_byte_identical_without_cache_cold_warm_and_tampered(
    reviews: Reviews, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(reviews.folder)
    cache = tmp_path / "cache"
    expected = outputs(reviews, reviews.plain)
    assert "~ Auto Scaling group: chat-serve-us-east-1-replicas" in expected[3]  # a real change is reviewed
    cold = preview_run(REVIEWED, cache_dir=cache)
    assert len(list((cache / stack_cache.FOLDER).glob("*.json"))) == 2
    assert outputs(reviews, cold) == expected
    with monkeypatch.context() as patch:
        no_preview(patch)
        warm = preview_run(REVIEWED, cache_dir=cache)
    assert outputs(reviews, warm) == expected

    keys = stack_cache.Keys(None, [], None, None)
    serve, registry = (cache / stack_cache.FOLDER / f"{keys.of(name)}.json" for name in REVIEWED)
    edited = serve.read_bytes().replace(b"chat-serve-us-east-1-replicas-base", b"chat-serve-us-east-1-replicas-gone")
    assert edited != serve.read_bytes()  # the content edited, its seal kept
    serve.write_bytes(edited)
    registry.write_bytes(registry.read_bytes()[:-40])  # truncated
    assert outputs(reviews, preview_run(REVIEWED, cache_dir=cache)) == expected
    with monkeypatch.context() as patch:  # both were previewed again and stored whole
        no_preview(patch)
        assert outputs(reviews, preview_run(REVIEWED, cache_dir=cache)) == expected


def test_a_foreign_entry_under_a_key_is_ignored(
    reviews: Reviews, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole, sound entry of another stack copied over this stack's file: its seal covers its own key."""
    monkeypatch.chdir(reviews.folder)
    cache = tmp_path / "cache"
    preview_run(REVIEWED, cache_dir=cache)
    keys = stack_cache.Keys(None, [], None, None)
    serve, registry = (cache / stack_cache.FOLDER / f"{keys.of(name)}.json" for name in REVIEWED)
    serve.write_bytes(registry.read_bytes())
    assert stack_cache.read(cache, str(keys.of("chat-serve"))) is None
    assert outputs(reviews, preview_run(REVIEWED, cache_dir=cache)) == outputs(reviews, reviews.plain)


def keys_of(folder: Path, names: list[str]) -> dict[str, str | None]:
    """The keys of stacks named as `preview` is given them, run inside the project at `folder`."""
    with contextlib.chdir(folder):
        keys = stack_cache.Keys(None, [], None, None)
        return {name: keys.of(name) for name in names}


EXAMPLES = ["llm-train", "llm-train-eks", "chat-serve", "chat-serve-k8s", "model-registry", "llm-finetune"]


def test_keys_are_content_addressed_not_path_addressed(tmp_path: Path) -> None:
    """Two checkouts at different paths (a review's head and its base worktree) share every key."""
    one, two = project(tmp_path / "one"), project(tmp_path / "two")
    first = keys_of(one, EXAMPLES)
    assert None not in first.values() and len(set(first.values())) == len(EXAMPLES)
    assert keys_of(two, EXAMPLES) == first


def test_a_same_account_sibling_invalidates_and_another_account_does_not(tmp_path: Path) -> None:
    folder = project(tmp_path / "repo")
    before = keys_of(folder, EXAMPLES)
    # llm-train-eks is in ml-training with llm-train and llm-finetune (stacks/org.yaml): their quota and budget
    # ledgers read it; chat-serve and chat-serve-k8s are in ml-inference and do not.
    grow(folder / "stacks", "llm-train-eks", "\nconfig:", "\n# an edit\nconfig:")
    after = keys_of(folder, EXAMPLES)
    changed = {name for name in EXAMPLES if after[name] != before[name]}
    assert changed == {"llm-train-eks", "llm-train", "llm-finetune"}


def test_the_registry_invalidates_the_stacks_whose_flows_read_it(tmp_path: Path) -> None:
    folder = project(tmp_path / "repo")
    before = keys_of(folder, EXAMPLES)
    grow(folder / "stacks", "model-registry", "\nconfig:", "\n# an edit\nconfig:")
    after = keys_of(folder, EXAMPLES)
    assert after["chat-serve"] != before["chat-serve"]  # its weight reads are judged by the registry's graph
    assert after["llm-train"] != before["llm-train"]  # its weight uploads too


def test_an_unreadable_sibling_is_counted_in(tmp_path: Path) -> None:
    """A sibling whose account cannot be told may be in any account: every stack's key reads it."""
    folder = project(tmp_path / "repo")
    before = keys_of(folder, EXAMPLES)
    (folder / "stacks" / "Pulumi.broken.yaml").write_text("config: [not, a, mapping\n")
    after = keys_of(folder, EXAMPLES)
    assert all(after[name] != before[name] for name in EXAMPLES)


def test_a_code_change_invalidates_every_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = project(tmp_path / "repo")
    before = keys_of(folder, EXAMPLES)
    monkeypatch.setattr("gpuinfra.store.fingerprint.code_fingerprint", lambda: "another package's code")
    after = keys_of(folder, EXAMPLES)
    assert all(after[name] != before[name] for name in EXAMPLES)


def test_the_options_and_the_files_they_name_are_in_the_key(tmp_path: Path) -> None:
    folder = project(tmp_path / "repo")
    usage = tmp_path / "usage.yml"
    usage.write_text("a: 1\n")
    name = str(folder / "stacks" / "Pulumi.llm-train.yaml")
    plain = stack_cache.Keys(None, [], None, None).of(name)
    with_usage = stack_cache.Keys(None, [], usage, None).of(name)
    suppressed = stack_cache.Keys(None, ["R1"], None, None).of(name)
    assert len({plain, with_usage, suppressed}) == 3
    usage.write_text("a: 2\n")
    assert stack_cache.Keys(None, [], usage, None).of(name) != with_usage
