# rtcbot — `make demo` and `make test` do all the set-up on a fresh machine.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

# Compiled modules are cached (__pycache__, which git ignores) even where the shell sets
# PYTHONDONTWRITEBYTECODE: each pytest-xdist worker and each `rtcbot` process that a test starts
# imports the tree, and without the cache each one compiles it again, and pytest rewrites every
# test module's asserts again (collection: 15 CPU-s a worker without, 7 with).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup setup-dev demo trial test check check-tests lint typecheck unit lane chaos-tests test-loaded bench chaos clean

# What the demo and the service need: the runtime packages, llama.cpp, Semgrep, PMD, JSHint.
setup: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh $(wildcard package.json)
	RTCBOT_EXTRAS="" bash scripts/install.sh $(VENV)
	@touch $@

# What the tests and lint add: the dev extras, Chromium (the dashboard's browser test) and
# promtool (the alert rules' test).
setup-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP)
	RTCBOT_EXTRAS=dev RTCBOT_BROWSER=1 RTCBOT_PROMTOOL=1 bash scripts/install.sh $(VENV)
	@touch $@

demo: setup
	$(BIN)/rtcbot review samples/demo.diff

# The App's whole loop against a local fake GitHub (the tests' own: it needs the dev extras).
trial: setup-dev
	$(BIN)/python scripts/trial.py

# Workflows: the repository's own and the ready one in docs/; zizmor runs offline.
WORKFLOWS := $(wildcard .github/workflows/*.yml docs/workflows/*.yml)

lint: setup-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/actionlint $(WORKFLOWS)
	$(BIN)/zizmor --offline --no-progress --config .github/zizmor.yml $(WORKFLOWS) action.yml
	$(BIN)/hadolint --failure-threshold info Dockerfile

# --strict on the product's code, the tests and benchmarks with check_untyped_defs (pyproject)
typecheck: setup-dev
	$(BIN)/mypy analyzers reporters bot tests bench

# Markers say what a slower test needs (slow, services, browser, model, chaos; tests/markers.py
# fails a test that lacks one). The tests run on three xdist workers on two cores, each with its
# own Redis database and PostgreSQL schemas: they wait on servers, sleeps and subprocesses (at
# -n 2 the machine was 70 % busy), and a fresh clone's `make test` took 622 s at -n 3, 670 s at -n 2. The fault-injection tests (`-m chaos`) kill and restart
# servers of their own (tests/reliability/services.py: initdb and redis-server on free ports) and
# SIGKILL their own workers, so they run beside the lane, in one process (76 s, 86 CPU-s quiet:
# the lane leaves about a third of two cores idle); their output is held until they end.
CHAOS_LOG := .rtcbot/chaos-tests.log

unit: setup-dev
	@$(MAKE) --no-print-directory -j2 lane chaos-tests

lane: setup-dev
	$(BIN)/pytest -q -n 3 --dist loadgroup -m "not chaos"

chaos-tests: setup-dev
	@mkdir -p $(dir $(CHAOS_LOG))
	@echo "fault-injection tests (tests/reliability) started beside; their output follows when they end"
	@$(BIN)/pytest -q -m chaos tests/reliability > $(CHAOS_LOG) 2>&1; status=$$?; \
	  echo "---- fault-injection tests (tests/reliability, -m chaos):"; cat $(CHAOS_LOG); exit $$status

# mypy (one core, about 45 CPU-s cold) runs beside the tests: the xdist lane leaves room
# (2026-11-29, quiet: 814 CPU-s of the machine in 579 s, 70 % of two cores)
test: lint
	@$(MAKE) --no-print-directory -j2 typecheck unit

# Before each commit (≤ 3 min on 2 cores): lint, types and the tests that need no service, no
# browser and no model. mypy (one core) runs beside the tests.
check: setup-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	@$(MAKE) --no-print-directory -j2 typecheck check-tests

# the fast lane: Hypothesis's `check` profile (tests/hypothesis_profiles.py) tries fewer examples a
# property; `make test` and CI try every one
check-tests: setup-dev
	HYPOTHESIS_PROFILE=check $(BIN)/pytest -q -n 2 -m "not slow and not services and not browser and not model and not chaos"

# The tests beside LOAD CPU-burning processes (default 2, one per core of a 2-core machine), as
# on a machine shared with other builds: waits, timeouts and Hypothesis' timing must hold.
# TESTS=... runs those pytest arguments alone (one process) instead of `make unit`.
LOAD ?= 2
TESTS ?=
test-loaded: setup-dev
ifneq ($(TESTS),)
	scripts/with_load.sh $(LOAD) -- $(BIN)/pytest -q -n 0 $(TESTS)
else
	scripts/with_load.sh $(LOAD) -- $(MAKE) --no-print-directory unit
endif

bench: setup-dev
	$(BIN)/python -m bench.run_all

# the long fault-injection suite (the short one runs in `make test`); rewrites docs/reliability.md
chaos: setup-dev
	$(BIN)/python -m tests.reliability.run

clean:
	rm -rf $(VENV) node_modules .rtcbot .pytest_cache .mypy_cache .ruff_cache
