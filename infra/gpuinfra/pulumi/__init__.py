"""Everything that imports the Pulumi SDK: the program `pulumi up` runs, its components, and the embedded
engine that runs the same program in-process under Pulumi's mocks for preview and tests."""
