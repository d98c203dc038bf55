# Two commands for everyone: `make lab` and `make test`.  Both build .venv first.
PYTHON ?= python3
VENV   := .venv
LAB_ARGS ?=
ROOT_ARG := $(if $(filter 0,$(shell id -u)),--allow-root)
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test venv lint bench exercises gpu-check clean

venv: $(STAMP)

$(STAMP): pyproject.toml tools/setup-venv $(wildcard labextension/*.json labextension/src/* labextension/style/*)
	PYTHON=$(PYTHON) tools/setup-venv $(VENV)
	@touch $@

lab: venv
	@tools/gpu-status --once
	$(BIN)/jupyter lab --notebook-dir=labs $(ROOT_ARG) $(LAB_ARGS)

test: venv
	tools/install-system-deps
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile --timeout 900 tests
	$(BIN)/python -m pytest -n 2 --dist loadfile --timeout 900 --nbval --nbval-sanitize-with labs/sanitize.cfg labs --ignore=labs/drafts

lint: venv
	$(BIN)/ruff check .

bench: venv
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m benchmarks

exercises: venv
	PATH=$(abspath $(BIN)):$$PATH tools/make-exercises

gpu-check:
	tools/gpu-check

clean:
	rm -rf $(VENV) .cache .pytest_cache
