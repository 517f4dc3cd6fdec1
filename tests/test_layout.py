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
    "findings",
    "templating",
    "store",
    "spec",
    "clouds",
    "catalog",
    "load",
    "plan",
    "validators",
    "graph",
    "account",
    "pulumi",
    "preflight",
    "cost",
    "policy",
    "review",
    "report",
    "workspace",
    "commands",
    "cli",
)
"""Lowest first: a stage may import itself and anything before it, nothing after it."""
PULUMI_SDK = {"pulumi", "pulumi_aws", "pulumi_aws_native", "pulumi_kubernetes", "pulumi_gcp"}
LOOSE_MODULES = {"__init__.py", "errors.py", "findings.py", "load.py", "templating.py", "cli.py"}


def modules(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / SOURCE_ROOT / "gpuinfra").rglob("*.py") if "__pycache__" not in p.parts)


def stage_of(module: str) -> str:
    """gpuinfra.report.render.table -> report; gpuinfra.cli -> cli. A cloud's own package is a column of stages:
    gpuinfra.clouds.gcp.pulumi.stack -> pulumi (its subpackages are named for the stage they belong to)."""
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "clouds" and parts[3] in STAGES:
        return parts[3]
    return parts[1]


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
    assert len(loose - {"__init__.py"}) <= 5
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
        if stage_of(".".join(path.relative_to(ROOT / SOURCE_ROOT).with_suffix("").parts)) != "pulumi"
        for line, module in imports(path)
        if module.split(".")[0] in PULUMI_SDK
    ]
    assert wrong == []


def test_the_policy_sdk_is_imported_only_by_the_policy_stage() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules()
        if stage_of(".".join(path.relative_to(ROOT / SOURCE_ROOT).with_suffix("").parts)) != "policy"
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
    assert found == {"gpuinfra.workspace.pack", "gpuinfra.workspace.pack.serve"}


def test_the_check_sees_a_planted_upward_import(tmp_path: Path) -> None:
    """A cost module reaching into the report (a stage above it), even from inside a function, is caught."""
    planted = tmp_path / SOURCE_ROOT / "gpuinfra" / "cost" / "bad.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f():\n    from gpuinfra.report.model import Report\n")
    assert "infra/gpuinfra/cost/bad.py:2 (cost) imports gpuinfra.report.model (report)" in upward_imports(tmp_path)


# The organization is the unit of work: the workspace (and the commands and entries above it) reads the stacks and
# runs the engine; every stage below judges one stack against plain data.
READERS = {"load_inputs", "inputs_from_config", "read_stack", "read_org"}
"""The functions that read a stack or organization file (gpuinfra.load, gpuinfra.spec)."""
ENGINE = ("gpuinfra.pulumi.engine", "gpuinfra.pulumi.preview", "gpuinfra.workspace")
ABOVE = {"workspace", "commands", "cli"}
FILE_CALLS = {"open", "read_bytes", "read_text", "glob", "rglob", "iterdir", "stat", "exists", "is_file"}


def _stage_of_path(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return stage_of(".".join(("gpuinfra", *parts)))


def in_stage(stage: str) -> list[Path]:
    """The modules of `stage`: its package, and each cloud package's subpackage of that name."""
    return sorted({*(PACKAGE / stage).rglob("*.py"), *PACKAGE.glob(f"clouds/*/{stage}/**/*.py")})


def readers_below_the_workspace(root: Path = ROOT) -> list[str]:
    """Imports of a stack/organization file reader or of the engine below the workspace. The reader itself
    (load.py, spec/) and the Pulumi package (whose engine it is) are the two places that own them."""
    wrong = []
    for path in modules(root):
        stage = _stage_of_path(path) if path.is_relative_to(PACKAGE) else path.relative_to(root).parts[2]
        if stage in ABOVE or stage in ("load", "spec"):
            continue
        for line, module in imports(path, root):
            name = module.rsplit(".", 1)[-1]
            reads = module.startswith(("gpuinfra.load.", "gpuinfra.spec.")) and name in READERS
            runs = module.startswith(ENGINE) and stage != "pulumi"
            if reads or runs:
                wrong.append(f"{path.relative_to(root)}:{line} ({stage}) imports {module}")
    return wrong


def test_no_stage_below_the_workspace_reads_a_stack_file_or_runs_the_engine() -> None:
    assert readers_below_the_workspace() == []


def test_the_check_sees_a_planted_reader(tmp_path: Path) -> None:
    planted = tmp_path / SOURCE_ROOT / "gpuinfra" / "policy" / "bad.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f():\n    from gpuinfra.pulumi.preview import preview_graph\n")
    assert readers_below_the_workspace(tmp_path) == [
        "infra/gpuinfra/policy/bad.py:2 (policy) imports gpuinfra.pulumi.preview",
        "infra/gpuinfra/policy/bad.py:2 (policy) imports gpuinfra.pulumi.preview.preview_graph",
    ]


def file_io(path: Path) -> list[str]:
    """Calls that touch the file system (open, Path.read_bytes, glob, ...) in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in FILE_CALLS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {name}")
    return found


def test_the_planner_does_no_io_and_imports_no_store() -> None:
    """plan/ promises plain functions of their arguments: no file, no cache, no reader."""
    wrong = []
    for path in in_stage("plan"):
        wrong += file_io(path)
        wrong += [
            f"{path.relative_to(ROOT)}:{line} imports {module}"
            for line, module in imports(path)
            if module.startswith(("gpuinfra.store", "gpuinfra.load", "gpuinfra.workspace"))
        ]
    assert wrong == []


def test_the_policy_stage_imports_no_engine_and_components_no_judge() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in in_stage("policy")
        for line, module in imports(path)
        if module.startswith(("gpuinfra.pulumi", "gpuinfra.store"))
        or (module.startswith("gpuinfra.clouds.") and stage_of(module) == "pulumi")
    ]
    wrong += [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in (PACKAGE / "pulumi" / "components").rglob("*.py")
        for line, module in imports(path)
        if module.startswith(("gpuinfra.report", "gpuinfra.policy", "gpuinfra.review", "gpuinfra.cost"))
    ]
    assert wrong == []


def module_cycles(root: Path = ROOT) -> list[list[str]]:
    """Strongly connected components of the module import graph (Tarjan), larger than one module."""
    names = {}
    for path in modules(root):
        parts = path.relative_to(root / SOURCE_ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges = {m: {i for _, i in imports(p, root) if i in names and i != m} for m, p in names.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return cycles


def test_the_import_graph_has_no_cycle() -> None:
    assert module_cycles() == []


def test_the_cycle_check_sees_a_planted_cycle(tmp_path: Path) -> None:
    package = tmp_path / SOURCE_ROOT / "gpuinfra" / "cost"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from gpuinfra.cost.b import x\n")
    (package / "b.py").write_text("def x():\n    from gpuinfra.cost import a\n")
    assert module_cycles(tmp_path) == [["gpuinfra.cost.a", "gpuinfra.cost.b"]]


def cloud_name_branches(root: Path = ROOT) -> list[str]:
    """Comparisons of a spec's target cloud with a cloud's name outside the cloud registry: a stage that asks
    "is this AWS?" instead of what the cloud does (gpuinfra.clouds) is an edit a new cloud would need."""
    found = []
    for path in modules(root):
        if path.relative_to(root / SOURCE_ROOT / "gpuinfra").parts[0] == "clouds":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            sides = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
            names_cloud = any(isinstance(side, ast.Attribute) and side.attr == "cloud" for side in sides)
            if names_cloud and any(isinstance(side, ast.Constant) for side in sides):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_stages_ask_the_cloud_registry_not_the_cloud_name() -> None:
    assert cloud_name_branches() == []


def test_the_registry_check_sees_a_planted_branch(tmp_path: Path) -> None:
    planted = tmp_path / SOURCE_ROOT / "gpuinfra" / "cost" / "bad.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f(spec):\n    return spec.target.cloud == 'aws'\n")
    assert cloud_name_branches(tmp_path) == ["infra/gpuinfra/cost/bad.py:2"]


def test_every_cloud_a_spec_can_name_has_a_registry_entry() -> None:
    from typing import get_args

    from gpuinfra.clouds import CLOUDS
    from gpuinfra.spec.target import Cloud

    assert set(get_args(Cloud)) == set(CLOUDS)


# The cloud seam: each cloud's own parts live in one package (clouds/<name>/), which no other cloud's package imports,
# and outside it only the registry's two halves name it; a new cloud touches nothing else but its templates (its catalog
# data is in its package: clouds/<name>/catalog/data/).
CLOUD_SEAM = {"infra/gpuinfra/clouds/__init__.py", "infra/gpuinfra/spec/target.py"}
"""The registry (the stages' half: each cloud's parts by module path) and spec/target.py (the spec's half: the
package of a cloud's own spec models). Besides these a cloud adds only templates/<name>/ and its package data's line in
pyproject.toml; its catalog data is its package's own (clouds/<name>/catalog/data/)."""


def cloud_packages(root: Path = ROOT) -> list[str]:
    """The names of the cloud packages: every folder of clouds/ with Python modules in it."""
    clouds = root / SOURCE_ROOT / "gpuinfra" / "clouds"
    return sorted(d.name for d in clouds.iterdir() if d.is_dir() and any(d.rglob("*.py")))


def _names(path: Path, package: str, root: Path) -> bool:
    """Whether the module imports `package` (at any depth, also inside a function) or names it as a module path
    (a registry entry's `module:attribute`, an import_module argument)."""
    return package in path.read_text(encoding="utf-8") or any(
        m == package or m.startswith(f"{package}.") for _, m in imports(path, root)
    )


def cross_cloud_imports(root: Path = ROOT) -> list[str]:
    """Modules of one cloud's package that import (or name) another cloud's package."""
    names = cloud_packages(root)
    wrong = []
    for own in names:
        for path in sorted((root / SOURCE_ROOT / "gpuinfra" / "clouds" / own).rglob("*.py")):
            for other in names:
                if other != own and _names(path, f"gpuinfra.clouds.{other}", root):
                    wrong.append(f"{path.relative_to(root).as_posix()} ({own}) names gpuinfra.clouds.{other}")
    return wrong


def test_no_cloud_package_imports_another_clouds() -> None:
    assert cross_cloud_imports() == []


def cloud_seam_crossings(root: Path = ROOT) -> dict[str, set[str]]:
    """Per cloud package, the modules outside it (shared stages, other clouds) that name it: what adding a cloud
    like it touches outside its own package."""
    found: dict[str, set[str]] = {}
    for name in cloud_packages(root):
        inside = root / SOURCE_ROOT / "gpuinfra" / "clouds" / name
        found[name] = {
            path.relative_to(root).as_posix()
            for path in modules(root)
            if not path.is_relative_to(inside) and _names(path, f"gpuinfra.clouds.{name}", root)
        }
    return found


def test_a_cloud_package_is_named_outside_itself_only_by_the_registry() -> None:
    """The list of files a new cloud touches outside its package: the registry's two halves, nothing else (its
    templates and package-data line aside); every cloud today stays within it, so a stage that names a cloud's package
    fails here."""
    crossings = cloud_seam_crossings()
    assert set(crossings) >= {"aws", "gcp"}
    for name, outside in crossings.items():
        assert outside <= CLOUD_SEAM, (name, sorted(outside - CLOUD_SEAM))
        assert "infra/gpuinfra/clouds/__init__.py" in outside, name  # the registry names each cloud's parts


def _plant_clouds(tmp_path: Path) -> Path:
    package = tmp_path / SOURCE_ROOT / "gpuinfra"
    for folder in ("clouds/aws/cost", "clouds/gcp/plan", "clouds/onprem", "cost", "spec"):
        (package / folder).mkdir(parents=True, exist_ok=True)
    (package / "clouds" / "__init__.py").write_text('PARTS = {"aws": "gpuinfra.clouds.aws.cost.book:book"}\n')
    (package / "spec" / "target.py").write_text('SPEC_PACKAGES = {"gcp": "gpuinfra.clouds.gcp.spec"}\n')
    (package / "clouds" / "aws" / "cost" / "book.py").write_text("from gpuinfra.cost import lines\n")
    (package / "clouds" / "gcp" / "plan" / "fleet.py").write_text(
        "def f():\n    from gpuinfra.clouds.aws.cost.book import book\n"
    )
    (package / "cost" / "bad.py").write_text('PRICER = "gpuinfra.clouds.gcp.cost.book:book"\n')
    (package / "cost" / "fine.py").write_text("from gpuinfra.clouds import type_part\n")
    return tmp_path


def test_the_cross_cloud_check_sees_a_planted_import(tmp_path: Path) -> None:
    """A Google planner reaching into AWS's price book (inside a function) is caught; an empty folder of clouds/ is
    no cloud package."""
    root = _plant_clouds(tmp_path)
    assert cloud_packages(root) == ["aws", "gcp"]
    assert cross_cloud_imports(root) == [
        "infra/gpuinfra/clouds/gcp/plan/fleet.py (gcp) names gpuinfra.clouds.aws",
    ]


def test_the_seam_check_sees_a_planted_stage_naming_a_cloud(tmp_path: Path) -> None:
    """A shared stage naming a cloud's module path in a string is a file a new cloud would have to edit; the
    registry's two halves are not."""
    root = _plant_clouds(tmp_path)
    assert cloud_seam_crossings(root) == {
        "aws": {"infra/gpuinfra/clouds/__init__.py", "infra/gpuinfra/clouds/gcp/plan/fleet.py"},
        "gcp": {"infra/gpuinfra/spec/target.py", "infra/gpuinfra/cost/bad.py"},
    }


def stray_cloud_data(root: Path = ROOT) -> list[str]:
    """A cloud's catalog data outside its package (a catalog/data/<cloud>/ folder), or a data file of a cloud's own
    catalog (clouds/<name>/catalog/data/) that pyproject.toml's package data leaves out of the wheel."""
    import fnmatch
    import tomllib

    setuptools = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    globs = setuptools.get("package-data", {})
    wrong = []
    for name in cloud_packages(root):
        if (root / SOURCE_ROOT / "gpuinfra" / "catalog" / "data" / name).exists():
            wrong.append(f"infra/gpuinfra/catalog/data/{name}/ holds {name}'s data outside its package")
        own = root / SOURCE_ROOT / "gpuinfra" / "clouds" / name / "catalog"
        patterns = globs.get(f"gpuinfra.clouds.{name}.catalog", [])
        for path in sorted((own / "data").rglob("*")) if (own / "data").is_dir() else []:
            rel = path.relative_to(own).as_posix()
            if path.is_file() and not any(fnmatch.fnmatch(rel, p) for p in patterns):
                wrong.append(
                    f"{path.relative_to(root).as_posix()} is not in the package data of gpuinfra.clouds.{name}"
                )
    return wrong


def test_a_clouds_catalog_data_is_inside_its_package_and_ships() -> None:
    assert stray_cloud_data() == []


def test_the_data_check_sees_stray_and_unshipped_files(tmp_path: Path) -> None:
    root = _plant_clouds(tmp_path)
    (root / "pyproject.toml").write_text(
        '[tool.setuptools.package-data]\n"gpuinfra.clouds.aws.catalog" = ["data/*.yaml"]\n'
    )
    (root / SOURCE_ROOT / "gpuinfra" / "catalog" / "data" / "gcp").mkdir(parents=True)
    data = root / SOURCE_ROOT / "gpuinfra" / "clouds" / "aws" / "catalog" / "data"
    data.mkdir(parents=True)
    (data / "quotas.yaml").write_text("codes: []\n")
    (data / "prices.json").write_text("{}\n")
    assert stray_cloud_data(root) == [
        "infra/gpuinfra/clouds/aws/catalog/data/prices.json is not in the package data of gpuinfra.clouds.aws",
        "infra/gpuinfra/catalog/data/gcp/ holds gcp's data outside its package",
    ]


LONG_FUNCTION_LINES = 60
KNOWN_LONG: set[str] = set()
"""Functions over the limit when the rule was written (issue 45), to become outlines of named steps (as plan_training
did); the list only shrinks: a new long function fails, and one made short must leave the list."""


def long_functions(root: Path = PACKAGE) -> dict[str, int]:
    """Functions over LONG_FUNCTION_LINES lines in plan/ and pulumi/components/, and in each cloud's own planner and
    program (clouds/<cloud>/plan/, clouds/<cloud>/pulumi/), by `path:name` (the longest of a name in a module)."""
    found: dict[str, int] = {}
    bases = [root / "plan", root / "pulumi" / "components", *root.glob("clouds/*/plan"), *root.glob("clouds/*/pulumi")]
    for base in bases:
        for path in sorted(base.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    name = f"{path.relative_to(root).as_posix()}:{node.name}"
                    if length > LONG_FUNCTION_LINES:
                        found[name] = max(length, found.get(name, 0))
    return found


def test_no_new_long_function_in_the_planner_or_the_components() -> None:
    """plan_training became an outline (issue 45); the rest of KNOWN_LONG follow."""
    found = set(long_functions())
    assert sorted(found - KNOWN_LONG) == []
    assert sorted(KNOWN_LONG - found) == [], "outlined: remove it from KNOWN_LONG"


def test_the_length_check_sees_a_planted_long_function(tmp_path: Path) -> None:
    planted = tmp_path / "plan" / "long.py"
    planted.parent.mkdir(parents=True)
    (tmp_path / "pulumi" / "components").mkdir(parents=True)
    planted.write_text("def long():\n" + "    x = 1\n" * LONG_FUNCTION_LINES)
    in_a_cloud = tmp_path / "clouds" / "gcp" / "pulumi" / "long.py"
    in_a_cloud.parent.mkdir(parents=True)
    in_a_cloud.write_text(planted.read_text())
    assert long_functions(tmp_path) == {
        "plan/long.py:long": LONG_FUNCTION_LINES + 1,
        "clouds/gcp/pulumi/long.py:long": LONG_FUNCTION_LINES + 1,
    }
