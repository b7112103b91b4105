# The two set-up commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml) | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[all,test]' --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

test: install
	$(BIN)/python -m pytest -n 2 -q

demo: install
	rm -rf demo-out
	$(BIN)/python -m tabarena_checks.demo --workdir demo-out

bench: install
	for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .checks demo-out .pytest_cache
