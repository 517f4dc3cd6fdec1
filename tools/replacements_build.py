"""Generate infra/gpuinfra/clouds/aws/catalog/data/replacements.yaml (AWS's own catalog): which input changes replace
a resource, from the providers' own definitions at the pinned versions.

- pulumi-aws resources: the ForceNew flags of terraform-provider-aws's schema (pulumi-aws is generated from it),
  read from a checkout of the terraform-provider-aws commit the pinned pulumi-aws bridges. That commit is the
  `upstream` submodule of pulumi-aws at the pinned tag: `git -C pulumi-aws ls-tree v<version> upstream`.
  A `d.ForceNew("x")` in a CustomizeDiff under a `n < o` test becomes `replace_if_decreased`.
- pulumi-aws-native resources: the `createOnlyProperties` of the CloudFormation resource provider schemas that
  the installed cfn-lint ships (pulumi-aws-native is generated from the same registry schemas).

    .venv/bin/python tools/replacements_build.py --tfaws ../terraform-provider-aws --tfaws-ref v6.x.y

A type whose source file is not in the checkout is carried from the current table and marked `carried: true`
(with --keep-missing); without that flag a missing file is an error. tests/diff/test_replacements_table.py
fails when an installed pin differs from the table's, so a provider upgrade forces a regeneration.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "infra" / "gpuinfra" / "clouds" / "aws" / "catalog" / "data" / "replacements.yaml"

TERRAFORM = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": "aws_fsx_lustre_file_system",
    "aws:ec2/vpc:Vpc": "aws_vpc",
    "aws:ec2/subnet:Subnet": "aws_subnet",
    "aws:autoscaling/group:Group": "aws_autoscaling_group",
    "aws:lb/loadBalancer:LoadBalancer": "aws_lb",
    "aws:ec2/placementGroup:PlacementGroup": "aws_placement_group",
    "aws:ec2/natGateway:NatGateway": "aws_nat_gateway",
    "aws:ec2/instance:Instance": "aws_instance",
    "aws:kms/key:Key": "aws_kms_key",
    "aws:s3/bucketV2:BucketV2": "aws_s3_bucket",
    "aws:s3/bucket:Bucket": "aws_s3_bucket",
    "aws:ecr/repository:Repository": "aws_ecr_repository",
}
"""pulumi-aws type token -> terraform resource name (pulumi-aws provider/resources.go maps one to the other)."""
ALIASES = {"aws:lb/loadBalancer:LoadBalancer": ["aws:alb/loadBalancer:LoadBalancer"]}

NATIVE = ["aws-native:pcs:Cluster", "aws-native:pcs:ComputeNodeGroup", "aws-native:pcs:Queue"]
"""pulumi-aws-native types the components create; their CloudFormation type is AWS::<MODULE>::<Name>."""

API_CREATE_ONLY = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": (
        "fsx",
        "CreateFileSystemLustreConfiguration",
        "UpdateFileSystemLustreConfiguration",
    ),
}
"""Properties the service's own API takes at creation and has no update for (botocore: a member of the create shape
that the update shape lacks) replace the resource whatever the provider source says; read from the installed
botocore. Only those the terraform row does not already mark become a row of their own (source botocore-create-only):
the pinned terraform source can predate a property (FSx's EfaEnabled, added to the API in 2024)."""

REFRESH = {
    "aws:autoscaling/group:Group": ["launchTemplate", "mixedInstancesPolicy", "launchConfiguration"],
    "aws-native:pcs:ComputeNodeGroup": ["amiId", "customLaunchTemplate"],
}
"""Updated in place, but running instances are replaced: an ASG's instance refresh triggers (terraform-provider-aws
autoscaling_group docs, instance_refresh: 'a refresh is started when any of the following ... launch_template,
mixed_instances_policy'); a PCS node group's new AMI or launch template (AWS PCS User Guide, updating a compute
node group). Not expressible as ForceNew or createOnly, so declared here."""


@dataclass
class ReplacementRule:
    types: list[str]
    source: str
    file: str
    replace: dict[str, int] = field(default_factory=dict)
    """pulumi property path -> line of its ForceNew in `file` (0 for a CloudFormation schema)."""
    replace_if_decreased: dict[str, int] = field(default_factory=dict)
    refresh: list[str] = field(default_factory=list)


# --- terraform-provider-aws ------------------------------------------------------------------------------------

_KEY = re.compile(r'^\s*(?:"(?P<lit>[a-z0-9_]+)"|names\.(?P<const>Attr\w+))\s*:\s*(?P<rest>.*)$')
_ACRONYM = re.compile(r"[A-Z]+(?=[A-Z][a-z]|s?$|\d)s?|[A-Z][a-z0-9]*")


def attr_constants(root: Path) -> dict[str, str]:
    """`names.AttrX` -> its literal, from names/attr_constants.csv of the checkout (the generator's own input)."""
    csv = root / "names" / "attr_constants.csv"
    out: dict[str, str] = {}
    if csv.exists():
        for line in csv.read_text(encoding="utf-8").splitlines()[1:]:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 2 and parts[0]:
                out["Attr" + parts[0]] = parts[1]
    return out


def snake_of_const(const: str, table: dict[str, str]) -> str:
    if const in table:
        return table[const]
    words = _ACRONYM.findall(const.removeprefix("Attr"))
    return "_".join(w.lower() for w in words)


def camel(snake: str) -> str:
    """terraform snake_case -> the bridge's camelCase property name."""
    head, *rest = snake.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def find_resource_file(root: Path, tf_name: str) -> Path | None:
    marker = f'@SDKResource("{tf_name}"'
    for path in sorted((root / "internal" / "service").rglob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if marker in text:
            return path
    return None


def _depth_change(line: str) -> int:
    code = re.sub(r'"(?:[^"\\]|\\.)*"|`[^`]*`|//.*$', "", line)
    return code.count("{") - code.count("}")


def force_new(lines: list[str], consts: dict[str, str]) -> Iterator[tuple[str, int]]:
    """(snake path, line number) of every attribute whose own block says `ForceNew: true`, nested blocks
    (Elem: &schema.Resource{Schema: ...}) as parent.child; from the resource function's first `Schema:` map."""
    marker = next((i for i, line in enumerate(lines) if "@SDKResource(" in line), 0)
    start = next(
        (i for i in range(marker, len(lines)) if re.search(r"map\[string\]\*schema\.Schema\{\s*$", lines[i])), None
    )
    if start is None:
        return
    stack: list[tuple[str, int]] = []  # (attribute, depth inside its block)
    depth = 1
    for i in range(start + 1, len(lines)):
        line = lines[i]
        m = _KEY.match(line)
        if m and m.group("rest").startswith("{") and (depth == 1 or (stack and depth == stack[-1][1] + 2)):
            name = m.group("lit") or snake_of_const(m.group("const"), consts)
            stack.append((name, depth + 1))
        elif stack and re.match(r"\s*ForceNew:\s*true", line) and depth == stack[-1][1]:
            yield ".".join(n for n, _ in stack), i + 1
        depth += _depth_change(line)
        while stack and depth < stack[-1][1]:
            stack.pop()
        if depth <= 0:
            return


def forced_if_decreased(lines: list[str], consts: dict[str, str]) -> Iterator[tuple[str, int]]:
    """`d.ForceNew("x")` whose guarding `if` compares the new value below the old one (`n.(int) < o.(int)`)."""
    for i, line in enumerate(lines):
        m = re.search(r'd\.ForceNew\("([a-z0-9_.]+)"\)', line)
        if not m:
            continue
        guard = next((lines[j] for j in range(i - 1, max(i - 6, -1), -1) if lines[j].strip().startswith("if ")), "")
        if re.search(r"\bn\.\(int\)\s*<\s*o\.\(int\)|\bnew\w*\s*<\s*old\w*", guard):
            yield m.group(1), i + 1


def tfaws_rule(token: str, root: Path, consts: dict[str, str]) -> ReplacementRule | None:
    path = find_resource_file(root, TERRAFORM[token])
    if path is None:
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(root).as_posix()
    rule = ReplacementRule([token, *ALIASES.get(token, [])], "tfaws-pinned", rel, refresh=REFRESH.get(token, []))
    for snake, line in force_new(lines, consts):
        rule.replace[".".join(camel(p) for p in snake.split("."))] = line
    for snake, line in forced_if_decreased(lines, consts):
        prop = ".".join(camel(p) for p in snake.split("."))
        if prop not in rule.replace:
            rule.replace_if_decreased[prop] = line
    return rule


# --- CloudFormation (pulumi-aws-native) ------------------------------------------------------------------------


def native_rule(token: str) -> ReplacementRule:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    module, name = token.removeprefix("aws-native:").split(":")
    type_name = f"AWS::{module.upper()}::{name}"
    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", type_name).schema
    rule = ReplacementRule([token], "cfn-lint-schemas", type_name, refresh=REFRESH.get(token, []))
    for pointer in schema.get("createOnlyProperties") or []:
        parts = pointer.removeprefix("/properties/").split("/")
        rule.replace[".".join(p[:1].lower() + p[1:] for p in parts if p != "*")] = 0
    return rule


def api_create_only(token: str) -> list[str]:
    """camelCase properties of `token` that the API creates and cannot update (API_CREATE_ONLY)."""
    import botocore.session

    service, create, update = API_CREATE_ONLY[token]
    model = botocore.session.get_session().get_service_model(service)
    only = set(model.shape_for(create).members) - set(model.shape_for(update).members)
    return sorted(name[:1].lower() + name[1:] for name in only)


def api_rules(marked: dict[str, set[str]]) -> list[ReplacementRule]:
    """One row per API_CREATE_ONLY type with the create-only properties no other row of it marks."""
    out = []
    for token, (service, create, update) in API_CREATE_ONLY.items():
        props = [p for p in api_create_only(token) if p not in marked.get(token, set())]
        if props:
            rule = ReplacementRule([token], "botocore-create-only", f"{service} {create} minus {update}")
            rule.replace = dict.fromkeys(props, 0)
            out.append(rule)
    return out


# --- the table -------------------------------------------------------------------------------------------------


def pins(tfaws_ref: str) -> dict[str, str]:
    return {
        "pulumi-aws": importlib.metadata.version("pulumi_aws"),
        "pulumi-aws-native": importlib.metadata.version("pulumi_aws_native"),
        "cfn-lint": importlib.metadata.version("cfn-lint"),
        "terraform-provider-aws": tfaws_ref,
    }


def render(rules: list[ReplacementRule], carried: list[dict[str, Any]], pinned: dict[str, str]) -> str:
    out = [
        "# GENERATED by tools/replacements_build.py: do not edit by hand; rerun the tool when a pin moves.",
        "# Which input changes make Pulumi replace a resource instead of updating it in place. Property names are the",
        "# Pulumi providers' (camelCase); a rule matches the property and everything under it (list indices ignored).",
        "#   replace:              any change replaces (terraform ForceNew / CloudFormation createOnlyProperties)",
        "#   replace_if_decreased: a smaller number replaces (a CustomizeDiff ForceNew under `new < old`)",
        "#   refresh:              updates in place, but running instances are replaced",
        "#   lines:                where each replace mark is in `file` at the pinned source",
        "# A `pulumi preview --json` carries the provider's own answer (replaceReasons); that one wins.",
        f"generated: {datetime.date.today().isoformat()}",
        "pins:",
        *(f"  {k}: {v!r}" if ":" in v or " " in v else f"  {k}: {v}" for k, v in pinned.items()),
        "rules:",
    ]
    for r in rules:
        props = {**r.replace, **r.replace_if_decreased}
        out += [
            f"  - types: [{', '.join(repr(t).replace(chr(39), chr(34)) for t in r.types)}]",
            f"    source: {r.source}",
            f"    file: {r.file}",
            f"    replace: [{', '.join(sorted(r.replace))}]",
        ]
        if r.replace_if_decreased:
            out.append(f"    replace_if_decreased: [{', '.join(sorted(r.replace_if_decreased))}]")
        if r.refresh:
            out.append(f"    refresh: [{', '.join(r.refresh)}]")
        if any(props.values()):
            out.append("    lines: {" + ", ".join(f"{k}: {v}" for k, v in sorted(props.items()) if v) + "}")
    if carried:
        from io import StringIO

        from ruamel.yaml import YAML

        yaml = YAML()
        yaml.default_flow_style = None
        buf = StringIO()
        yaml.dump([{**c, "carried": True} for c in carried], buf)
        out += [
            "  # carried from the previous table: their source files were not in the checkout given",
            "  " + buf.getvalue().replace("\n", "\n  ").rstrip(),
        ]
    return "\n".join(out) + "\n"


def current_rows() -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    if not TABLE.exists():
        return []
    rows = YAML(typ="safe", pure=True).load(TABLE.read_text(encoding="utf-8")).get("rules") or []
    return [dict(r) for r in rows]


def build(tfaws: Path, tfaws_ref: str, keep_missing: bool, carry_pinned: bool = False) -> str:
    consts = attr_constants(tfaws)
    rules: list[ReplacementRule] = []
    missing: list[str] = []
    for token in TERRAFORM:
        if any(token in r.types for r in rules):
            continue
        rule = tfaws_rule(token, tfaws, consts)
        if rule is None:
            missing.append(token)
        else:
            rules.append(rule)
    rules += [native_rule(t) for t in NATIVE]
    if missing and not keep_missing:
        raise SystemExit(f"no source for {', '.join(missing)} under {tfaws}: give a full checkout, or --keep-missing")
    carried = [
        {k: v for k, v in row.items() if k not in ("carried",)}
        for row in current_rows()
        if any(t in missing for t in row.get("types", []))
        and row.get("source") not in ("botocore-create-only", *(() if carry_pinned else ("tfaws-pinned",)))
    ]
    marked: dict[str, set[str]] = {}
    for r in rules:
        for t in r.types:
            marked.setdefault(t, set()).update(r.replace)
    for row in carried:
        for t in row.get("types", []):
            marked.setdefault(t, set()).update(row.get("replace", []))
    return render(rules + api_rules(marked), carried, pins(tfaws_ref))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tfaws", type=Path, required=True, help="terraform-provider-aws checkout at the pinned commit"
    )
    parser.add_argument("--tfaws-ref", required=True, help="the tag or commit of that checkout, recorded in the table")
    parser.add_argument("--keep-missing", action="store_true", help="carry rows of types whose source is absent")
    parser.add_argument(
        "--carry-pinned",
        action="store_true",
        help="with --keep-missing, carry the rows read from a pinned source earlier too (their file absent now)",
    )
    parser.add_argument("--out", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    text = build(args.tfaws, args.tfaws_ref, args.keep_missing, args.carry_pinned)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
