"""Translations of pulumi-aws inputs into AWS API requests, one module per service family."""
