# The two commands of the README: `make run` and `make test`.
# Each creates (or reuses) the local virtual environment .venv by itself.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The bot: polls Telegram when config.toml or TELEGRAM_BOT_TOKEN gives a token, otherwise the
# local console, with a one-line hint (python -m bot alone explains how to get a token).
run: $(STAMP)
	$(VENV)/bin/python -m bot --or-console

test: $(STAMP)
	$(VENV)/bin/python -m ruff check .
	$(VENV)/bin/python -m ruff format --check .
	$(VENV)/bin/python -m mypy
	$(VENV)/bin/python -m pytest -q

bench: $(STAMP)
	$(VENV)/bin/python -m bench.retrieval --data ../shared/bench/data

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
