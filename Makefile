# The two set-up commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo bench clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml) | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[all,test]' --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

test: install chromium
	$(BIN)/python -m pytest -n 2 -q

# the HTML reports are rendered by headless Chromium in the tests (Debian's package; CI runs as root)
chromium:
	@test -x /usr/bin/chromium || { if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else echo "make: /usr/bin/chromium is missing and this is not root: the browser tests will be skipped"; fi; }

demo: install
	rm -rf demo-out
	$(BIN)/python -m tabarena_checks.demo --workdir demo-out
	$(BIN)/python -m hfmigrate_checks.demo --workdir demo-out/hf
	@echo; echo "reports: $(CURDIR)/demo-out/report.html (the run) and $(CURDIR)/demo-out/hf/bundle/review.html (the review bundle)"

bench: install
	for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .checks demo-out .pytest_cache
