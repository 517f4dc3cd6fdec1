"""The pack directory's entry point (`pulumi preview --policy-pack policies`); the rules are in infra.policy."""

from infra.policy.rules import serve

serve()
