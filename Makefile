# The two set-up commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# TabArena itself, in its own environment: the parity tests drive it by subprocess (never a project dependency)
TA_VENV ?= .venv-tabarena
TA_REQ := tests/tabarena-requirements.txt
TA_STAMP := $(TA_VENV)/.installed

.PHONY: install tabarena-env test demo bench clean chromium dist manifest

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml) | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[all,test]' --config-settings editable_mode=compat
	touch $(STAMP)

install: $(STAMP)

# the rule manifests (checks/manifest.py): regenerate after changing a rule; tests/core/test_core_manifest.py fails on a stale one
MANIFESTED := tabarena_checks.plugin hfmigrate_checks.plugin
manifest: install
	$(BIN)/python -m checks.manifest $(MANIFESTED)
	PYTHONPATH=plugins/mteb $(BIN)/python -m checks.manifest mteb_checks.plugin

$(TA_STAMP): $(TA_REQ)
	rm -rf $(TA_VENV)
	$(PYTHON) -m venv $(TA_VENV)
	$(TA_VENV)/bin/python -m pip install -q -r $(TA_REQ)
	touch $(TA_STAMP)

tabarena-env: $(TA_STAMP)

test: install chromium $(TA_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	CHECKS_TABARENA_PYTHON=$(CURDIR)/$(TA_VENV)/bin/python TABARENA_PYTHON=$(CURDIR)/$(TA_VENV)/bin/python \
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

# the wheel and the sdist in dist/, to install without a release (docs/install.md); built in isolation by `build`
dist: | $(BIN)/python
	$(BIN)/python -m pip install -q build
	rm -rf dist
	$(BIN)/python -m build -q --outdir dist .

clean:
	rm -rf $(VENV) $(TA_VENV) .checks demo-out .pytest_cache dist
