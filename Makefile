# The two commands of the README: `make run` and `make test`.
# Each creates (or reuses) the local virtual environment .venv by itself: `make run` installs
# only what the bot needs, `make test` (and `make check`) adds the development tools, `make docs`
# the documentation's.
PYTHON ?= python3
VENV := .venv
# The suite's workers: its tests mostly wait (on servers, child processes, fsync), so more
# workers than cores still shortens it; make test WORKERS=0 runs it in one process.
WORKERS ?= 4
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: run test check lint docs bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e .
	touch $@

# The development tools include everything the bot needs, so they stand for its stamp too.
$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	touch $@ $(RUN_STAMP)

$(DOCS_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e '.[docs]'
	touch $@

# The bot: polls Telegram when config.toml or TELEGRAM_BOT_TOKEN gives a token, otherwise the
# local console, with a one-line hint (python -m bot alone explains how to get a token).
run: $(RUN_STAMP)
	$(VENV)/bin/python -m bot --or-console

lint: $(DEV_STAMP)
	$(VENV)/bin/python -m ruff check .
	$(VENV)/bin/python -m ruff format --check .
	$(VENV)/bin/python -m mypy

# Everything, as CI runs it (.ci/run).
test: lint
	$(VENV)/bin/python -m pytest -q -n $(WORKERS)

# The daily loop: lint, types and the tests not marked slow.
check: lint
	$(VENV)/bin/python -m pytest -q -n $(WORKERS) -m "not slow"

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/python -m mkdocs build --strict

bench: $(RUN_STAMP)
	$(VENV)/bin/python -m bench.retrieval --data ../shared/bench/data

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis
