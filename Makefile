# The two commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Install, then check the bundled example specs and show their next fires.
run: $(STAMP)
	$(BIN)/reconciler validate specs/
	$(BIN)/reconciler next specs/ --count 3

## Install, then run every quality gate and the whole test suite.
test: $(STAMP)
	$(BIN)/ruff check reconciler tests bench
	$(BIN)/mypy reconciler
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
