"""The resource type tokens the installed provider packages define: what the allow-list and the pack's path and
launcher families are held against (a misspelled or a new type cannot hide)."""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from importlib.util import find_spec
from pathlib import Path

PACKAGES = ("pulumi_aws", "pulumi_aws_native", "pulumi_kubernetes", "pulumi_random", "pulumi_gcp")


@cache
def provider_types() -> frozenset[str]:
    """Every resource type token the installed provider packages register, and their provider types: read from
    the `resource_modules` / `resource_packages` JSON each package's __init__.py hands to `_utilities.register`
    (the tables the Pulumi SDK resolves type tokens with), without importing the packages."""
    found: set[str] = set()
    for package in PACKAGES:
        spec = find_spec(package)
        assert spec is not None and spec.origin, package
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "register"]
        keywords = {k.arg: k.value for c in calls for k in c.keywords}
        modules = json.loads(ast.literal_eval(keywords["resource_modules"]))
        found.update(token for module in modules for token in module["classes"])
        found.update(p["token"] for p in json.loads(ast.literal_eval(keywords["resource_packages"])))
    return frozenset(found)


ARGS_CLASS = re.compile(r"^class (\w+Args):\n    def __init__\(__self__, \*,\n(.*?)\):$", re.S | re.M)
PARAMETER = re.compile(r"^\s+(\w+): (.*?)(?: = None)?,?$", re.M)
NESTED = re.compile(r"'(\w+Args)'")


@cache
def _registrations(package: str) -> list[dict]:
    spec = find_spec(package)
    assert spec is not None and spec.origin, package
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "register"]
    keywords = {k.arg: k.value for c in calls for k in c.keywords}
    return json.loads(ast.literal_eval(keywords["resource_modules"]))


@cache
def _arguments_of(folder: Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """Every input class of one provider module (its resources' `<Name>Args` and the nested ones of _inputs.py):
    argument name -> the nested input classes its type names, read from the generated source."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for path in folder.glob("*.py"):
        if path.name.startswith("get_") or path.name in ("outputs.py", "_enums.py", "__init__.py"):
            continue
        for match in ARGS_CLASS.finditer(path.read_text(encoding="utf-8")):
            out[match.group(1)] = {
                p.group(1): tuple(NESTED.findall(p.group(2))) for p in PARAMETER.finditer(match.group(2))
            }
    return out


def types_with_argument(packages: tuple[str, ...], names: frozenset[str]) -> dict[str, str]:
    """Resource types whose inputs name one of `names`, at any depth of nested inputs: type -> the path to it
    (`resource_config.instance_type`). Read from the provider packages' generated source (their schemas)."""
    found: dict[str, str] = {}
    for package in packages:
        root = Path(find_spec(package).origin).parent  # type: ignore[union-attr, arg-type]
        for module in _registrations(package):
            folder = root.joinpath(*module["fqn"].split(".")[1:])
            classes = _arguments_of(folder)
            for token, name in module["classes"].items():
                path = _path_to(classes, f"{name}Args", names, ())
                if path:
                    found[token] = path
    return found


def _path_to(classes: dict, name: str, names: frozenset[str], seen: tuple[str, ...]) -> str | None:
    arguments = classes.get(name, {})
    for argument in arguments:
        if argument in names:
            return argument
    for argument, nested in arguments.items():
        for inner in nested:
            if inner not in seen:
                deeper = _path_to(classes, inner, names, (*seen, name))
                if deeper:
                    return f"{argument}.{deeper}"
    return None
