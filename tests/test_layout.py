"""The layout is the pipeline: each stage imports only the stages below it (so no import cycle between
packages), only `gpuinfra.pulumi` imports the Pulumi SDK, and renderers read only the report model. Read from
the source's imports (every import, also those inside functions), not from a picture in a document."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ROOT = "infra"
"""The source root (setuptools' package-dir): the import package `gpuinfra` lives in infra/gpuinfra/."""
PACKAGE = ROOT / SOURCE_ROOT / "gpuinfra"
STAGES = (
    "errors",
    "templating",
    "store",
    "spec",
    "catalog",
    "load",
    "plan",
    "validators",
    "graph",
    "pulumi",
    "preflight",
    "cost",
    "policy",
    "review",
    "report",
    "commands",
    "cli",
)
"""Lowest first: a stage may import itself and anything before it, nothing after it."""
PULUMI_SDK = {"pulumi", "pulumi_aws", "pulumi_aws_native", "pulumi_kubernetes"}
LOOSE_MODULES = {"__init__.py", "errors.py", "load.py", "templating.py", "cli.py"}


def modules(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / SOURCE_ROOT / "gpuinfra").rglob("*.py") if "__pycache__" not in p.parts)


def stage_of(module: str) -> str:
    """gpuinfra.report.render.table -> report; gpuinfra.cli -> cli."""
    return module.split(".")[1]


def imports(path: Path, root: Path = ROOT) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, top-level or inside a function."""
    base = root / SOURCE_ROOT if path.is_relative_to(root / SOURCE_ROOT) else root  # policies/ sits at the root
    parts = path.relative_to(base).with_suffix("").parts
    package = parts[:-1]  # a module's package, and an __init__'s own package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                yield node.lineno, ".".join([*base, *([node.module] if node.module else [])])
            else:
                yield node.lineno, node.module or ""
                if node.module and node.module.split(".")[0] == "gpuinfra":
                    # `from gpuinfra.graph import tokens` imports the module gpuinfra.graph.tokens
                    for alias in node.names:
                        yield node.lineno, f"{node.module}.{alias.name}"


def test_every_module_sits_in_a_known_stage_and_few_are_loose() -> None:
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose <= LOOSE_MODULES, loose - LOOSE_MODULES
    assert len(loose - {"__init__.py"}) <= 4
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert packages <= set(STAGES), packages - set(STAGES)


def upward_imports(root: Path = ROOT) -> list[str]:
    wrong = []
    for path in modules(root):
        own = stage_of(".".join(path.relative_to(root / SOURCE_ROOT).with_suffix("").parts))
        for line, module in imports(path, root):
            if module.split(".")[0] != "gpuinfra" or module == "gpuinfra":
                continue
            other = stage_of(module)
            if other in STAGES and STAGES.index(other) > STAGES.index(own):
                wrong.append(f"{path.relative_to(root)}:{line} ({own}) imports {module} ({other})")
    return wrong


def test_each_stage_imports_only_the_stages_below_it() -> None:
    assert upward_imports() == []


def test_only_the_pulumi_package_imports_the_pulumi_sdk() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules()
        if path.relative_to(PACKAGE).parts[0] != "pulumi"
        for line, module in imports(path)
        if module.split(".")[0] in PULUMI_SDK
    ]
    assert wrong == []


def test_the_policy_sdk_is_imported_only_by_the_policy_stage() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules()
        if path.relative_to(PACKAGE).parts[0] != "policy"
        for line, module in imports(path)
        if module.split(".")[0] == "pulumi_policy"
    ]
    assert wrong == []


def test_renderers_read_only_the_report_model() -> None:
    allowed = tuple(f"gpuinfra.report.{m}" for m in ("model", "format", "sections", "templates"))
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in (PACKAGE / "report" / "render").glob("*.py")
        for line, module in imports(path)
        if module.startswith("gpuinfra.")
        and not module.startswith(("gpuinfra.report.render", *allowed))
        and module not in ("gpuinfra.report",)
    ]
    assert wrong == []


def test_the_pack_directory_holds_no_rules() -> None:
    """`policies/` is what `pulumi preview --policy-pack policies` loads: its entry point only serves the
    installed pack (gpuinfra.policy.rules), so the pack cannot drift from what gpuinfra preview runs."""
    pack = ROOT / "policies"
    assert sorted(p.name for p in pack.glob("*.py")) == ["__main__.py"]
    found = {module for _, module in imports(pack / "__main__.py")}
    assert found == {"gpuinfra.policy.rules", "gpuinfra.policy.rules.serve"}


def test_the_check_sees_a_planted_upward_import(tmp_path: Path) -> None:
    """A cost module reaching into the report (a stage above it), even from inside a function, is caught."""
    planted = tmp_path / SOURCE_ROOT / "gpuinfra" / "cost" / "bad.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f():\n    from gpuinfra.report.model import Report\n")
    assert "infra/gpuinfra/cost/bad.py:2 (cost) imports gpuinfra.report.model (report)" in upward_imports(tmp_path)
