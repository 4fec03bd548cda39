# The two commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run daemon test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

RUN_FOR ?= 75s

## Install, check the bundled example specs, then run the daemon on them for $(RUN_FOR)
## (jobs fire within the first minute) and show the state it recorded.
run: $(STAMP)
	$(BIN)/reconciler validate specs/
	$(BIN)/reconciler next specs/examples --count 1
	$(BIN)/reconciler run --specs specs/examples --state .reconciler --run-for $(RUN_FOR)
	$(BIN)/reconciler status --specs specs/examples --state .reconciler

## Install, then run the daemon on the examples until Ctrl-C.
daemon: $(STAMP)
	$(BIN)/reconciler run --specs specs/examples --state .reconciler

## Install, then run every quality gate and the whole test suite.
test: $(STAMP)
	$(BIN)/ruff check reconciler tests bench
	$(BIN)/mypy reconciler
	$(BIN)/python -m pytest

## Install the bench extra (APScheduler 3, SQLAlchemy, matplotlib), then run the side-by-side
## benchmarks (about 14 minutes) and rewrite the peers section of BENCHMARKS.md.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
