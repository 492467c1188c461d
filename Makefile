# Two commands for a fresh machine (see README):
#   make chat   set up, ingest the bundled sample, start the bot on it
#   make test   set up, run the test suite
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
SAMPLE  := examples/kb
INDEX   ?= .cache/sample-index

.PHONY: chat ask test bench eval setup clean

$(BIN)/.installed: requirements.txt requirements.lock
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.txt -c requirements.lock
	touch $@

setup: $(BIN)/.installed

$(INDEX)/CURRENT: $(BIN)/.installed $(shell find $(SAMPLE) -type f 2>/dev/null)
	$(BIN)/python ingest.py $(SAMPLE) --index $(INDEX)
	touch $@

chat: $(INDEX)/CURRENT
	$(BIN)/python bot.py --index $(INDEX)

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

bench: $(INDEX)/CURRENT
	$(BIN)/python bench.py --index $(INDEX)

eval: $(INDEX)/CURRENT
	$(BIN)/python evaluate.py --index $(INDEX)

clean:
	rm -rf $(VENV) .cache
