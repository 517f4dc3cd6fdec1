"""The arguments that make the file system EFA-enabled, checked against the sources that settle them in this venv:
pulumi-aws's LustreFileSystem arguments, the CloudFormation schema of AWS::FSx::FileSystem (cfn-lint) and the FSx API
model (botocore), read here, not restated."""

from __future__ import annotations

import inspect

import botocore.loaders
import pulumi_aws as aws
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
from gpuinfra.pulumi.components.training.storage import METADATA_MODE, efa_arguments


def test_pulumi_aws_takes_the_arguments() -> None:
    parameters = inspect.signature(aws.fsx.LustreFileSystem._internal_init).parameters
    assert set(efa_arguments(True)) <= set(parameters)
    assert efa_arguments(False) == {}


def test_the_cloudformation_schema_has_them() -> None:
    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::FSx::FileSystem").schema
    lustre = schema["definitions"]["LustreConfiguration"]["properties"]
    assert lustre["EfaEnabled"] == {"type": "boolean"}
    assert "Mode" in schema["definitions"]["MetadataConfiguration"]["properties"]


def test_the_fsx_api_knows_the_mode() -> None:
    shapes = botocore.loaders.Loader().load_service_model("fsx", "service-2")["shapes"]
    config = shapes["CreateFileSystemLustreConfiguration"]["members"]
    assert {"EfaEnabled", "MetadataConfiguration"} <= set(config)
    assert METADATA_MODE in shapes["MetadataConfigurationMode"]["enum"]
