# Two commands set everything up: `make preview` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
STACKS := $(sort $(wildcard stacks/Pulumi.*.yaml))

.PHONY: preview test lint bench clean

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

## Validate, run and report every bundled example stack.
preview: $(STAMP)
	$(BIN)/gpuinfra preview $(STACKS)

## Run the test suite.
test: $(STAMP)
	$(BIN)/python -m pytest

## Static checks (not part of `make test`).
lint: $(STAMP)
	$(BIN)/ruff check infra templates policies tests bench setup.py
	$(BIN)/mypy

## Benchmarks (not part of `make test`); writes bench/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info
