# rtcbot — `make demo` and `make test` do all the set-up on a fresh machine.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck unit bench chaos clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh $(wildcard package.json)
	bash scripts/install.sh $(VENV)
	@touch $@

demo: setup
	$(BIN)/rtcbot review samples/demo.diff

# Workflows: the repository's own and the ready one in docs/; zizmor runs offline.
WORKFLOWS := $(wildcard .github/workflows/*.yml docs/workflows/*.yml)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/actionlint $(WORKFLOWS)
	$(BIN)/zizmor --offline --no-progress --config .github/zizmor.yml $(WORKFLOWS) action.yml
	$(BIN)/hadolint --failure-threshold info Dockerfile

typecheck: setup
	$(BIN)/mypy analyzers reporters bot

unit: setup
	$(BIN)/pytest -q

test: lint typecheck unit

bench: setup
	$(BIN)/python -m bench.run_all

# the long fault-injection suite (the short one runs in `make test`); rewrites docs/reliability.md
chaos: setup
	$(BIN)/python -m tests.reliability.run

clean:
	rm -rf $(VENV) node_modules .rtcbot .pytest_cache .mypy_cache .ruff_cache
