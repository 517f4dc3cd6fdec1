"""bench/properties.py times the right files and reads pytest's JUnit XML as pytest writes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import properties

ROOT = Path(__file__).resolve().parents[2]


def test_the_property_files_are_those_that_use_hypothesis() -> None:
    found = {str(p.relative_to(ROOT)) for p in properties.property_files()}
    assert {"tests/spec/test_fuzz.py", "tests/spec/test_fuzz_preview.py", "tests/spec/test_yaml_fast.py"} <= found
    assert "tests/fuzzing.py" not in found  # strategies, no test
    assert "tests/bench/test_properties.py" not in found


def test_durations_are_read_from_pytest_junit_xml(tmp_path: Path) -> None:
    """A real pytest run's report: two tests that sleep a known time, one of them parametrized twice (its cases
    summed under one name)."""
    (tmp_path / "test_sleepy.py").write_text(
        "import time, pytest\n"
        "def test_once():\n    time.sleep(0.3)\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_twice(n):\n    time.sleep(0.2)\n"
    )
    report = tmp_path / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts="]
    done = subprocess.run([*command, f"--junitxml={report}", "test_sleepy.py"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stdout
    found = properties.durations(report)
    assert set(found) == {"test_sleepy.py::test_once", "test_sleepy.py::test_twice"}
    assert 0.3 <= found["test_sleepy.py::test_once"] < 1.3
    assert 0.4 <= found["test_sleepy.py::test_twice"] < 1.4  # 2 x 0.2 s
