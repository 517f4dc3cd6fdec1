"""Pytest configuration: the --update-goldens flag and the catalog fixture."""

from __future__ import annotations

import os

import pytest
from gpuinfra.catalog import Catalog, load_catalog

# Reports warn when a price is older than a limit counted from today: the tests count from a fixed day (the
# reproducible-builds convention gpuinfra.catalog.staleness follows), so a report does not change with the calendar.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1796083200")  # 2026-12-01T00:00:00Z
# The CLI's default review cache stays out of the tests (tests/cli/test_review_cache_default.py turns it on).
os.environ.setdefault("GPUINFRA_CACHE", "off")
# Under the CLI the pack trusts the organization file of origin/$GITHUB_BASE_REF in a pull request's run
# (gpuinfra.workspace.trusted); the tests that mean it set it (tests/policies/test_trusted_revision.py).
os.environ.pop("GITHUB_BASE_REF", None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite golden files from the current output instead of comparing.",
    )


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
