"""Region and account of a resource come from its provider, however the provider's inputs are encoded."""

from __future__ import annotations

import pytest
from gpuinfra.graph.views import Location, location


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"region": "us-west-2", "allowedAccountIds": '["222222222222"]'}, Location("us-west-2", "222222222222")),
        ({"region": "eu-central-1", "allowedAccountIds": ["333333333333"]}, Location("eu-central-1", "333333333333")),
        (
            {"region": "us-east-1", "assumeRoles": '[{"roleArn": "arn:aws:iam::444444444444:role/x"}]'},
            Location("us-east-1", "444444444444"),
        ),
        ({"region": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}, Location("ap-northeast-1", None)),
        ({}, Location("ap-northeast-1", None)),
    ],
)
def test_provider_location(inputs: dict, expected: Location) -> None:  # type: ignore[type-arg]
    assert location(inputs, default_region="ap-northeast-1") == expected
