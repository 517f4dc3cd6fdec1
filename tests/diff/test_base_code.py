"""The templates a checkout renders are its own (the base side of `diff --base-ref` relies on it; the layouts it
runs are tested in test_baseref.py)."""

from __future__ import annotations

from pathlib import Path


def test_the_templates_rendered_are_the_ones_beside_the_code() -> None:
    """A source checkout renders its own top-level templates/ (not another checkout's, through an editable
    install's finder): the folder is found from the package's file."""
    import gpuinfra
    from gpuinfra.templating import templates_folder

    assert templates_folder() == Path(gpuinfra.__file__).resolve().parents[2] / "templates"
