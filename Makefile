# Two commands for a fresh machine (see README):
#   make chat   set up, ingest the bundled sample, start the bot on it
#   make test   set up, lint, type-check, run the test suite (what .ci/run calls)
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
SAMPLE  := examples/kb
INDEX   ?= .cache/sample-index

.PHONY: chat test lint bench eval setup clean

$(BIN)/.installed: requirements.txt requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.txt -c requirements.lock
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

setup: $(BIN)/.installed

$(INDEX)/CURRENT: $(BIN)/.installed $(shell find $(SAMPLE) -type f 2>/dev/null)
	$(BIN)/python ingest.py $(SAMPLE) --index $(INDEX)
	touch $@

chat: $(INDEX)/CURRENT
	$(BIN)/python bot.py --index $(INDEX)

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy citebot

test: lint
	$(BIN)/python -m pytest -q

bench: $(INDEX)/CURRENT
	$(BIN)/python bench.py

eval: $(INDEX)/CURRENT
	$(BIN)/python evaluate.py --index $(INDEX)

clean:
	rm -rf $(VENV) .cache
