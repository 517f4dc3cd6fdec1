"""The resource type tokens the installed provider packages define: what the allow-list and the pack's path and
launcher families are held against (a misspelled or a new type cannot hide)."""

from __future__ import annotations

import ast
import json
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
