# One command sets up everything on first use; the CPU build of torch goes in first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.genlab-installed

.PHONY: setup run test test-slow test-heavy lint format bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)  ## the environment alone

run: $(STAMP)  ## set up on first use, then reproduce grokking
	$(BIN)/genlab run grokking

test: $(STAMP)  ## set up on first use, then lint, check the format and run the test suite (without the slow tests)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check -q src tests benchmarks tools
	$(BIN)/python -m pytest -q -n 2 -m "not slow and not heavy"

test-slow: $(STAMP)  ## the slow tests alone (a real local Ray, kill-and-resume, compatibility matrices)
	$(BIN)/python -m pytest -q -n 2 -m slow --durations=15

test-heavy: $(STAMP)  ## claim controls that train for a minute or more each, and open ones (not in CI)
	$(BIN)/python -m pytest -q -n 2 -m heavy

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks tools

bench: $(STAMP)
	$(BIN)/python benchmarks/grokking.py

clean:
	rm -rf $(VENV) genlab-runs
