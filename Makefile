# Two commands set everything up: `make preview` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
STACKS := $(sort $(wildcard stacks/Pulumi.*.yaml))
# checkov (tests/components/test_checkov.py) pins an older botocore than preflight's: a virtualenv of its own.
CHECKOV       := .venv-checkov
CHECKOV_STAMP := $(CHECKOV)/.installed-stamp

.PHONY: preview test lint bench goldens clean

# pyproject.toml's requires-python, checked before pip runs (pip's own refusal is pages long), also against a
# .venv left by another Python, which is rebuilt rather than kept broken.
SUPPORTED := import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 14))

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c '$(SUPPORTED)' 2>/dev/null || { echo "gpuinfra needs Python 3.11 to 3.13, but $(PYTHON) is \
	$$($(PYTHON) -V 2>/dev/null || echo not found): run make PYTHON=python3.12 (or another 3.11-3.13)" >&2; exit 1; }
	@test ! -x $(BIN)/python || $(BIN)/python -c '$(SUPPORTED)' || { echo "rebuilding $(VENV): it was made by \
	$$($(BIN)/python -V 2>&1)" >&2; rm -rf $(VENV); }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m compileall -q infra/gpuinfra  # as a wheel install does, even under PYTHONDONTWRITEBYTECODE
	touch $(STAMP)

## Validate, run and report every bundled example stack.
preview: $(STAMP)
	$(BIN)/gpuinfra preview $(STACKS)

$(CHECKOV_STAMP): tools/checkov/requirements.txt
	test -x $(CHECKOV)/bin/python || $(PYTHON) -m venv $(CHECKOV)
	$(CHECKOV)/bin/python -m pip install --quiet --disable-pip-version-check -r tools/checkov/requirements.txt
	touch $(CHECKOV_STAMP)

## Run the test suite.
test: $(STAMP) $(CHECKOV_STAMP)
	$(BIN)/python -m pytest

## Rewrite the golden renders (user data, JobSet, Markdown) and their MANIFEST.json, deliberately.
goldens: $(STAMP)
	$(BIN)/python -m pytest -n 0 tests/goldens tests/report/test_diff_render.py --update-goldens

## Static checks (not part of `make test`).
lint: $(STAMP)
	$(BIN)/ruff check infra templates policies tests bench setup.py
	$(BIN)/mypy

## Benchmarks (not part of `make test`); writes bench/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(CHECKOV) build *.egg-info
