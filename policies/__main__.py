"""The pack directory's entry point (`pulumi preview --policy-pack policies`); the rules are in gpuinfra.policy."""

from gpuinfra.policy.rules import serve

serve()
