# Two commands for everyone: `make lab` and `make test`.  Both build .venv first.
PYTHON ?= python3
VENV   := .venv
LAB_ARGS ?=
ROOT_ARG := $(if $(filter 0,$(shell id -u)),--allow-root)
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test venv lint bench exercises gpu-check clean site translations

venv: $(STAMP)

$(STAMP): pyproject.toml tools/setup-venv $(wildcard labextension/*.json labextension/src/* labextension/style/*)
	PYTHON=$(PYTHON) tools/setup-venv $(VENV)
	@touch $@

# `make lab LANG=ja` (or a LANG=ja_JP... locale): the Japanese labs, JupyterLab and cudakit's
# messages in Japanese. JupyterLab's language is a user setting, kept per language in the venv.
LAB_LANG := $(if $(filter ja ja_%,$(LANG)),ja)
LAB_DIR  := $(if $(LAB_LANG),labs/$(LAB_LANG),labs)
LAB_ENV  := $(if $(LAB_LANG),CUDAKIT_LANG=$(LAB_LANG) JUPYTERLAB_SETTINGS_DIR=$(abspath $(VENV))/lab-settings-$(LAB_LANG))

lab: venv
	@tools/gpu-status --once
	@$(if $(LAB_LANG),tools/lab-language $(LAB_LANG) $(VENV)/lab-settings-$(LAB_LANG))
	$(LAB_ENV) $(BIN)/jupyter lab --notebook-dir=$(LAB_DIR) $(ROOT_ARG) $(LAB_ARGS)

# The course website (English and Japanese) in build/website/.
site: venv
	$(BIN)/python website/build.py

# labs/ja, solutions/ja, exercises/ja from the English notebooks and translations/.
translations: venv
	PATH=$(abspath $(BIN)):$$PATH tools/translate-notebooks

# Tests compare English messages and outputs, whatever the developer's locale.
test: export CUDAKIT_LANG = en
test: venv
	tools/install-system-deps
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile --timeout 900 tests
	PYTHONPATH=tests $(BIN)/python -m pytest -n 2 --dist loadfile --timeout 900 -p nbval_retry --nbval --nbval-sanitize-with labs/sanitize.cfg labs --ignore=labs/drafts

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
