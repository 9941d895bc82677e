# One virtualenv (.venv) for everything; each target creates or reuses it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=

.PHONY: help venv test test-fast lint format demo serve synth deploy destroy bench bench-tokens clean

help:
	@echo "make demo    - set up and run the local demo (moto + offline coach + local scheduler pump)"
	@echo "make test    - set up and run the whole test suite"
	@echo "make lint    - ruff check + format check"
	@echo "make synth   - cdk synth (installs the CDK CLI from npm into node_modules)"
	@echo "make deploy  - cdk deploy (needs AWS credentials)"
	@echo "make bench   - run the benchmarks (see docs/benchmarks.md)"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

demo: $(STAMP)
	$(BIN)/promptpipe demo

serve: $(STAMP)
	$(BIN)/promptpipe serve

node_modules/.bin/cdk:
	npm install --no-save --no-audit --no-fund --silent aws-cdk@2

synth: $(STAMP) node_modules/.bin/cdk
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk synth --quiet $(CDK_ARGS)

deploy: $(STAMP) node_modules/.bin/cdk
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk deploy $(CDK_ARGS)

destroy: $(STAMP) node_modules/.bin/cdk
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk destroy $(CDK_ARGS)

bench: $(STAMP)
	$(BIN)/python -m scripts.bench_calls
	$(BIN)/python -m scripts.bench_tokens --baseline $(TOKENS_BASELINE)

# The revision the token figures of docs/benchmarks.md are compared with (before issue 14).
TOKENS_BASELINE ?= 7ae007d
bench-tokens: $(STAMP)
	$(BIN)/python -m scripts.bench_tokens --baseline $(TOKENS_BASELINE)

clean:
	rm -rf $(VENV) cdk.out build node_modules .pytest_cache
