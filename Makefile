# rtcbot — `make demo` and `make test` do all the set-up on a fresh machine.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck unit bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh $(wildcard package.json)
	bash scripts/install.sh $(VENV)
	@touch $@

demo: setup
	$(BIN)/rtcbot review samples/demo.diff

lint: setup
	$(BIN)/ruff check .

typecheck: setup
	$(BIN)/mypy analyzers bot

unit: setup
	$(BIN)/pytest -q

test: lint typecheck unit

bench: setup
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) node_modules .rtcbot .pytest_cache .mypy_cache .ruff_cache
