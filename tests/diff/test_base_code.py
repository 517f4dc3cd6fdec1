"""`diff --base-ref` previews the base with the base's own code: the folder put on PYTHONPATH and the entry
point follow the revision's layout (renamed or not), and a revision without gpuinfra's code is refused,
never previewed by the installed code (which would report "unchanged" for every change of code)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpuinfra.errors import InputError
from gpuinfra.review.baseref import base_code


def touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")


def test_a_renamed_revision_runs_from_its_source_root(tmp_path: Path) -> None:
    touch(tmp_path / "infra" / "gpuinfra" / "cli.py")
    assert base_code(tmp_path, "main") == ((tmp_path / "infra").resolve(), "from gpuinfra.cli import main; main()")


def test_a_revision_before_the_rename_runs_its_infra_package(tmp_path: Path) -> None:
    touch(tmp_path / "infra" / "cli.py")
    assert base_code(tmp_path, "v0.1") == (tmp_path.resolve(), "from infra.cli import main; main()")


def test_a_revision_without_the_code_is_refused(tmp_path: Path) -> None:
    touch(tmp_path / "stacks" / "Pulumi.x.yaml")
    with pytest.raises(InputError, match="has no gpuinfra code"):
        base_code(tmp_path, "elsewhere")


def test_the_templates_rendered_are_the_ones_beside_the_code() -> None:
    """A source checkout renders its own top-level templates/ (not another checkout's, through an editable
    install's finder): the folder is found from the package's file."""
    import gpuinfra
    from gpuinfra.templating import templates_folder

    assert templates_folder() == Path(gpuinfra.__file__).resolve().parents[2] / "templates"
