"""AWS sits behind the cloud seam as Google does: its own parts (quota model, preflight, price book, replacement
table) live in gpuinfra.clouds.aws and are found through the registry, and nothing outside that package names it but the
registry: the list of files a new cloud package touches outside itself."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds import CLOUDS, Parts, cloud, owner_of, type_part
from gpuinfra.plan.quotas import InstanceDemand
from helpers import ROOT, example_graph, graph_for
from test_layout import imports

PACKAGE = ROOT / "infra" / "gpuinfra"
ALLOWED_OUTSIDE = {"infra/gpuinfra/clouds/__init__.py"}
"""The registry names the package's parts by module path; AWS's specs are the stack specs of spec/ (spec/target.py
lists no package for it); its own catalog data (quota codes, EKS versions, PCS regions, ELB's log-delivery accounts,
the replacement rules) is in the package (clouds/aws/catalog/data/), the data it shares with on premises in
catalog/data/."""


def aws_package_users(package: Path = PACKAGE, base: Path = ROOT) -> set[str]:
    """Modules outside clouds/aws/ that import gpuinfra.clouds.aws (at any depth, also inside a function) or
    name one of its modules."""
    found = set()
    for path in package.rglob("*.py"):
        rel = path.relative_to(base).as_posix()
        if "/clouds/aws/" in rel or "__pycache__" in rel:
            continue
        named = "gpuinfra.clouds.aws" in path.read_text(encoding="utf-8")
        if named or any(m.startswith("gpuinfra.clouds.aws") for _, m in imports(path, base)):
            found.add(rel)
    return found


def test_the_aws_package_is_named_only_by_the_registry() -> None:
    assert aws_package_users() == ALLOWED_OUTSIDE


def test_the_check_sees_a_stage_importing_the_aws_package(tmp_path: Path) -> None:
    planted = tmp_path / "infra" / "gpuinfra" / "cost"
    planted.mkdir(parents=True)
    (planted / "bad.py").write_text("def f():\n    from gpuinfra.clouds.aws.cost.book import PRICERS\n")
    (planted / "also.py").write_text("import gpuinfra.clouds.aws.preflight.table as table\n")
    (planted / "fine.py").write_text("from gpuinfra.clouds import type_part\n")
    assert aws_package_users(tmp_path / "infra" / "gpuinfra", tmp_path) == {
        "infra/gpuinfra/cost/bad.py",
        "infra/gpuinfra/cost/also.py",
    }


def test_every_cloud_names_its_planner_validators_and_program() -> None:
    """No built-in fallback: each stage asks the spec's cloud for its part, and every cloud has one."""
    for entry in CLOUDS.values():
        for name in ("planner", "validators", "program"):
            assert entry.part(name) is not None, (entry.name, name)


@pytest.mark.parametrize("name", ["preflight", "prices", "replacements"])
def test_a_cloud_that_owns_resource_types_names_their_parts(name: str) -> None:
    for entry in CLOUDS.values():
        if entry.packages or entry.types:
            assert entry.part(name) is not None, (entry.name, name)
        else:
            with pytest.raises(LookupError, match=f"no {name} part"):
                entry.part(name)


def test_aws_parts_live_in_the_aws_package() -> None:
    parts = cloud("aws").parts
    own = {f.name: getattr(parts, f.name) for f in dataclasses.fields(Parts)}
    assert {k for k, v in own.items() if v and v.startswith("gpuinfra.clouds.aws")} == {
        "validators",
        "quotas",
        "quota_book",
        "eks_versions",
        "log_delivery",
        "quota_usage",
        "preflight",
        "prices",
        "replacements",
    }


def _in_a_fresh_process(script: str) -> str:
    """What `script` prints in a new interpreter: the registry as a process that has met no stack yet sees it."""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_aws_rules_register_with_awss_validators_not_the_shared_ones() -> None:
    """PCS's and EKS's rules are AWS's: the shared validators (on premises' too) no longer register them; AWS's
    registry entry names the module that does, after the shared rules its stacks also run."""
    out = _in_a_fresh_process(
        "import gpuinfra.validators as shared\nfrom gpuinfra.clouds import cloud\n"
        "ids = ('pcs-region-unsupported', 'eks-version-ended', 'lustre-too-small', 'model-does-not-fit')\n"
        "print(*[i in shared.RULES for i in ids])\ncloud('aws').part('validators')\n"
        "print(*[i in shared.RULES for i in ids])\n"
        "print(cloud('onprem').parts.validators, cloud('aws').parts.validators)\n"
    )
    before, after, parts = out.splitlines()
    assert before.split() == ["False", "False", "False", "True"]
    assert after.split() == ["True", "True", "True", "True"]
    assert parts.split() == ["gpuinfra.validators", "gpuinfra.clouds.aws.validators"]


def test_suppress_knows_every_clouds_rules_whichever_are_loaded() -> None:
    """`--suppress` is checked before any stack is read: an AWS rule (lustre-dataset-share-unknown, AWS's PCS) and a
    Google one (gcp-weights-wait-past-autoheal) are known in a process that has loaded neither cloud's rules, and a
    misspelt id is refused with the nearest one."""
    out = _in_a_fresh_process(
        "from gpuinfra.validators.checked import check_suppress_ids\nfrom gpuinfra.errors import InputError\n"
        "check_suppress_ids(['lustre-dataset-share-unknown', 'gcp-weights-wait-past-autoheal'])\n"
        "try:\n    check_suppress_ids(['lustre-dataset-share-unknwn'])\n"
        "except InputError as exc:\n    print(exc)\n"
    )
    assert "--suppress names unknown rule 'lustre-dataset-share-unknwn'" in out
    assert "lustre-dataset-share-unknown" in out.split("unknwn", 1)[1]


def test_a_cloud_with_quotas_names_its_quota_model() -> None:
    """The shared planners ask the spec's cloud for its quota model; on premises has none (a site's allotment)."""
    for entry in CLOUDS.values():
        if entry.account_quotas:
            assert callable(entry.part("quotas")), entry.name
        else:
            with pytest.raises(LookupError, match="no quotas part"):
                entry.part("quotas")


def test_the_aws_quota_model_counts_vcpus_per_ec2_quota_code() -> None:
    """Through the registry, as the shared planners and the pack's quota-within-grant reach it (the pack by the
    owner of EC2's instance type). p5.48xlarge has 192 vCPUs and g6.xlarge 4 (EC2 instance type specifications);
    P instances count against L-417A185B on demand and L-C4BD4855 as Spot, G ones against L-DB2E81BA (EC2 service
    quotas: clouds/aws/catalog/data/quotas.yaml)."""
    model = cloud("aws").part("quotas")
    assert type_part("aws:ec2/instance:Instance", "quotas") is model
    demands = [
        InstanceDemand("us-east-1", "p5.48xlarge", "on_demand", 2),
        InstanceDemand("us-east-1", "p5.48xlarge", "spot", 3),
        InstanceDemand("us-east-1", "g6.xlarge", "on_demand", 1),
        InstanceDemand("us-east-1", "p5.48xlarge", "on_demand", 0),  # none: counts nothing
        InstanceDemand("us-east-1", "no-such.type", "on_demand", 5),  # not in the catalog: the validators say so
    ]
    needs = model(demands, load_catalog(), "ml-training", "111111111111", {"us-east-1": {"L-417A185B": 400}})
    assert [(n.code, n.purchase, n.vcpus, n.granted, n.shortfall) for n in needs] == [
        ("L-417A185B", "on_demand", 384, 400, 0),
        ("L-C4BD4855", "spot", 576, None, 576),
        ("L-DB2E81BA", "on_demand", 4, None, 4),
    ]


def test_the_pack_reads_ec2_quota_holdings_through_the_registry() -> None:
    """quota-within-grant asks each cloud's `quota_usage` part what a graph holds of its quotas. llm-train's groups
    at their most (org.yaml's comments on ml-training's grants): the gang's 16 p5.48xlarge on its reservation count
    On-Demand P (L-417A185B), the elastic partition's 2 Spot p5.48xlarge count P5 Spot (L-C4BD4855), and the PCS
    login node's m7i.2xlarge counts On-Demand Standard (L-1216C47A); the stack requests no increase."""
    from gpuinfra.policy.rules.quotas import quota_clouds
    from gpuinfra.policy.rules.values import StackView
    from gpuinfra.policy.runner import stack_resources

    assert [c.name for c in quota_clouds()] == ["aws"]  # Google's and on premises' say none (gpuinfra.clouds)
    usage = cloud("aws").part("quota_usage")(StackView(stack_resources(example_graph("llm-train"))), load_catalog())
    demands = {(d.region, d.instance_type, d.purchase, d.count) for d in usage.demands["111111111111"]}
    assert demands == {
        ("us-east-1", "p5.48xlarge", "on_demand", 16),
        ("us-east-1", "p5.48xlarge", "spot", 2),
        ("us-east-1", "m7i.2xlarge", "on_demand", 1),
    }
    assert {code: sorted(n for n, _ in users) for (_, _, code), users in usage.users.items()} == {
        "L-417A185B": ["llm-train-slurm-pcs-od"],
        "L-C4BD4855": ["llm-train-slurm-pcs-elastic"],
        "L-1216C47A": ["llm-train-slurm-pcs-login"],
    }
    assert usage.requests == {}


def test_the_aws_reading_sees_the_stacks_own_increase_request() -> None:
    """With ml-training asking for increases and its P grant at 512, the program requests the account's whole need
    on L-417A185B: llm-train's 16 x 192 vCPUs + llm-train-eks's 4 x 192 + llm-finetune's p5.4xlarge (16) = 3856."""
    from gpuinfra.policy.rules.values import StackView
    from gpuinfra.policy.runner import stack_resources

    org = {
        "accounts.ml-training.quotas.us-east-1.L-417A185B": 512,
        "accounts.ml-training.request_quota_increases": True,
    }
    graph = graph_for("llm-train", org=org)
    usage = cloud("aws").part("quota_usage")(StackView(stack_resources(graph)), load_catalog())
    assert usage.requests == {("111111111111", "us-east-1", "L-417A185B"): 3856}


EC2_QUOTA_WORDS = ("quota_code(", "quota_unknown(", "SERVICE_QUOTA", "serviceCode", "servicequotas")
"""What reading EC2's quotas looks like: the catalog's EC2 quota codes, Service Quotas requests."""


def shared_policy_ec2_readers(package: Path = PACKAGE, base: Path = ROOT) -> set[str]:
    """Shared policy modules (outside any cloud package) that read EC2 quota codes or Service Quotas requests
    themselves instead of asking the cloud's `quota_usage` part."""
    return {
        path.relative_to(base).as_posix()
        for path in (package / "policy").rglob("*.py")
        if any(word in path.read_text(encoding="utf-8") for word in EC2_QUOTA_WORDS)
    }


def test_the_shared_pack_reads_no_ec2_quota_itself() -> None:
    assert shared_policy_ec2_readers() == set()


def test_the_ec2_reader_check_sees_a_planted_reading(tmp_path: Path) -> None:
    planted = tmp_path / "infra" / "gpuinfra" / "policy" / "rules"
    planted.mkdir(parents=True)
    (planted / "bad.py").write_text("def f(catalog, info):\n    return catalog.quota_code(info.family, 'spot')\n")
    (planted / "also.py").write_text("def g(stack):\n    return stack.of_type(tokens.SERVICE_QUOTA)\n")
    (planted / "fine.py").write_text("from gpuinfra.clouds import CLOUDS\n")
    assert shared_policy_ec2_readers(tmp_path / "infra" / "gpuinfra", tmp_path) == {
        "infra/gpuinfra/policy/rules/bad.py",
        "infra/gpuinfra/policy/rules/also.py",
    }


@pytest.mark.parametrize(
    ("type_token", "owner"),
    [
        ("aws:ec2/launchTemplate:LaunchTemplate", "aws"),
        ("aws-native:pcs:Cluster", "aws"),
        ("pulumi:providers:aws", "aws"),
        ("kubernetes:karpenter.sh/v1:NodePool", "aws"),  # launches EC2 instances: AWS bills them
        ("kubernetes:apps/v1:Deployment", None),
        ("gcp:compute/network:Network", "gcp"),
        ("random:index/randomPassword:RandomPassword", None),
    ],
)
def test_a_resource_type_belongs_to_the_cloud_of_its_package(type_token: str, owner: str | None) -> None:
    found = owner_of(type_token)
    assert (found.name if found else None) == owner


def test_aws_preflight_judges_the_graph_through_the_registry() -> None:
    """A launch template of the training example is judged by botocore's CreateLaunchTemplate model, found by its
    type's package; the rules over the whole graph come with the part."""
    graph = example_graph("llm-train")
    template = next(r for r in graph.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate")
    part = type_part(template.type, "preflight")
    assert part.judges(template.type) and not part.judges("kubernetes:apps/v1:Deployment")
    assert {r.id for r in part.RULES} >= {"PF-X-TARGET"}
    bad = dataclasses.replace(template, inputs={**template.inputs, "instanceType": 7})
    found = part.check(bad, graph)
    assert [f.rule for f in found if f.path == "instanceType"] == ["PF-AWS-API"]
