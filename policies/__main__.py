"""The pack directory's entry point (`pulumi preview --policy-pack policies`); the rules are in gpuinfra.policy,
the stack's facts are read by gpuinfra.workspace.pack."""

from gpuinfra.workspace.pack import serve

serve()
