"""The organization's accounts do not depend on which module a process imports first: a cloud's spec package
(Google's projects) imports the spec stage, which builds the `accounts` union from that package; were the union
built at import, importing the cloud's package first would find it half initialized and drop its entries. Each
order runs in a fresh interpreter, since the first import is what is under test."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

READ = (
    "import hashlib, json\n"
    "from pathlib import Path\n"
    "from gpuinfra.spec import Organization, read_org\n"
    "org = read_org(Path('stacks/org.yaml')).org\n"
    "print(' '.join(f'{name}:{type(entry).__name__}' for name, entry in sorted(org.accounts.items())))\n"
    "schema = json.dumps(Organization.model_json_schema(), sort_keys=True)\n"
    "print(hashlib.sha256(schema.encode()).hexdigest())\n"
)
ORDERS = {
    "the spec first": "import gpuinfra.spec\n",
    "Google's spec package first": "import gpuinfra.clouds.gcp.spec\n",
    "Google's project model first": "import gpuinfra.clouds.gcp.spec.project\n",
    "Google's fleet model first": "from gpuinfra.clouds.gcp.spec.fleet import GcpInferenceSpec\n",
}


def read_after(first: str) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", first + READ], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    accounts, schema = done.stdout.split("\n")[:2]
    return accounts, schema


@pytest.mark.parametrize("order", ORDERS)
def test_googles_projects_are_accounts_whichever_module_is_imported_first(order: str) -> None:
    """stacks/org.yaml names two Google projects (gcp-chat, gcp-research, `cloud: gcp`) beside four AWS accounts."""
    accounts, schema = read_after(ORDERS[order])
    assert accounts.split() == [
        "corpus-prep:Account",
        "gcp-chat:GcpProject",
        "gcp-research:GcpProject",
        "ml-inference:Account",
        "ml-registry:Account",
        "ml-training:Account",
    ]
    assert schema == read_after(ORDERS["the spec first"])[1]  # the same JSON Schema: Google's entry offered too
