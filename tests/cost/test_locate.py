"""Region and account of a resource come from its provider, however the provider's inputs are encoded."""

from __future__ import annotations

import pytest

from infra.cost.locate import provider_where
from infra.cost.model import Where


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"region": "us-west-2", "allowedAccountIds": '["222222222222"]'}, Where("us-west-2", "222222222222")),
        ({"region": "eu-central-1", "allowedAccountIds": ["333333333333"]}, Where("eu-central-1", "333333333333")),
        (
            {"region": "us-east-1", "assumeRoles": '[{"roleArn": "arn:aws:iam::444444444444:role/x"}]'},
            Where("us-east-1", "444444444444"),
        ),
        ({"region": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}, Where("ap-northeast-1", None)),
        ({}, Where("ap-northeast-1", None)),
    ],
)
def test_provider_where(inputs: dict, expected: Where) -> None:  # type: ignore[type-arg]
    assert provider_where(inputs, default_region="ap-northeast-1") == expected
