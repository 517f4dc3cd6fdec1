"""Only what pyproject.toml cannot say: the package list is the packages found under infra/ plus
`gpuinfra.templates`, which package-dir maps onto the top-level templates/ folder."""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages("infra", include=["gpuinfra", "gpuinfra.*"]), "gpuinfra.templates"])
