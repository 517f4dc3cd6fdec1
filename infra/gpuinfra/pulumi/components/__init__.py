"""Pulumi ComponentResources, one per concept. Only this package and program.py import Pulumi."""
