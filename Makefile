# One virtualenv (.venv) for everything; each target creates or reuses it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=
# make test: the coverage gate (scripts/coverage_gate.py) and the zone of the second, non-UTC pass
COV_LINE   ?= 95
COV_BRANCH ?= 88
TEST_TZ    ?= America/Toronto

.PHONY: help venv test test-fast mutation lint typecheck imports refs format demo serve synth deploy destroy bench bench-tokens clean

# Every target carries a "## what it does" comment; `make help` lists them all.
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

venv: $(STAMP) ## create or update .venv with the project and its dev extras

test: $(STAMP) ## the whole suite with line and branch coverage (gated), then the unit tests under a non-UTC TZ
	mkdir -p build
	$(BIN)/python -m pytest -n 2 --dist loadfile --cov --cov-report=term:skip-covered \
		--cov-report=json:build/coverage.json $(PYTEST_ARGS)
	$(BIN)/python -m scripts.coverage_gate build/coverage.json --line $(COV_LINE) --branch $(COV_BRANCH)
	TZ=$(TEST_TZ) $(BIN)/python -m pytest tests/unit -n 2 --dist loadfile -p no:cacheprovider $(PYTEST_ARGS)

test-fast: $(STAMP) ## run the unit tests only
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

mutation: $(STAMP) ## mutation scores of the core modules against their gate (slow; docs/reliability.md)
	$(BIN)/python -m pip install --quiet -e '.[dev,mutation]'
	$(BIN)/python -m scripts.mutation_gate --run $(MUTATION_MODULES)

lint: $(STAMP) ## ruff check and format check, mypy, the import contracts (.pre-commit-config.yaml runs the same)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	PYTHONPATH=shared:. $(BIN)/lint-imports

typecheck: $(STAMP) ## mypy (with the pydantic plugin) over shared/, functions/ and infra/
	$(BIN)/mypy

imports: $(STAMP) ## check the import layering contracts (pyproject.toml [tool.importlinter])
	PYTHONPATH=shared:. $(BIN)/lint-imports

refs: $(STAMP) ## rewrite citations of documents outside the repository (scripts/rewrite_refs.py)
	$(BIN)/python -m scripts.rewrite_refs

format: $(STAMP) ## format the code and apply ruff's safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

demo: $(STAMP) ## run the local demo (moto, offline coach, local scheduler pump)
	$(BIN)/promptpipe demo

serve: $(STAMP) ## run the local server (the API and webhooks on localhost)
	$(BIN)/promptpipe serve

node_modules/.bin/cdk:
	npm install --no-save --no-audit --no-fund --silent aws-cdk@2

synth: $(STAMP) node_modules/.bin/cdk ## cdk synth (installs the CDK CLI from npm into node_modules)
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk synth --quiet $(CDK_ARGS)

deploy: $(STAMP) node_modules/.bin/cdk ## cdk deploy (needs AWS credentials)
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk deploy $(CDK_ARGS)

destroy: $(STAMP) node_modules/.bin/cdk ## cdk destroy (needs AWS credentials)
	PATH="$(CURDIR)/$(BIN):$$PATH" node_modules/.bin/cdk destroy $(CDK_ARGS)

bench: $(STAMP) ## run the benchmarks (see docs/benchmarks.md)
	$(BIN)/python -m scripts.bench_calls
	$(BIN)/python -m scripts.bench_tokens --baseline $(TOKENS_BASELINE)

# The revision the token figures of docs/benchmarks.md are compared with (before the turn pipeline).
TOKENS_BASELINE ?= 7ae007d
bench-tokens: $(STAMP) ## model tokens per turn and LLM cost, before (TOKENS_BASELINE) and after
	$(BIN)/python -m scripts.bench_tokens --baseline $(TOKENS_BASELINE)

clean: ## remove .venv, build outputs and caches
	rm -rf $(VENV) cdk.out build node_modules .pytest_cache
