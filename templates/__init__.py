"""Jinja2 templates, shipped as the package data of `gpuinfra.templates` (pyproject.toml's package-dir maps
this folder there); read them through `gpuinfra.templating`, never by path."""
