"""The bundled stacks work under the Pulumi CLI as shipped: no placeholder `encryptionsalt` (with the passphrase
secrets manager Pulumi checks the salt's ciphertext against the passphrase and answers "incorrect passphrase"
for any passphrase: pulumi/pulumi pkg/secrets/passphrase/manager.go, symmetricCrypterFromPhraseAndState), and
every placeholder secret says, in the file, the command that replaces it."""

from __future__ import annotations

import pytest
from helpers import EXAMPLES, STACKS
from ruamel.yaml import YAML


@pytest.mark.parametrize("stack", EXAMPLES)
def test_no_placeholder_salt_and_every_secret_says_how_to_set_it(stack: str) -> None:
    path = STACKS / f"Pulumi.{stack}.yaml"
    text = path.read_text()
    data = YAML(typ="safe").load(text)
    assert "encryptionsalt" not in data, f"{path.name}: a salt only the passphrase that made it opens"
    secrets = [key for key, value in data["config"].items() if isinstance(value, dict) and set(value) == {"secure"}]
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    for key in secrets:
        assert f"pulumi config set --secret {key}" in comments or (
            "pulumi config set --secret" in comments and "replace each" in comments
        ), f"{path.name}: {key} is a placeholder and the file does not say how to set it"
