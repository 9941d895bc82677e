# One virtualenv (.venv); every target creates or reuses it, with versions from requirements.lock.
# `make demo` installs only the local stack (the `local` extra: no CDK, no test tools); `make test`,
# `make lint`, `make synth` install everything (the `dev` extra). uv (from PyPI, into .venv) does the
# installing; pip would do the same from the same lock, only slower.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
LOCK   := requirements.lock
UV_VERSION := 0.13.9
UV     := $(BIN)/uv
HASH   := $(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
STAMP_LOCAL := $(VENV)/.installed-local-$(HASH)
STAMP_DEV   := $(VENV)/.installed-dev-$(HASH)
NODE_RECOMMENDED := 22
PYTEST_ARGS ?=
# make test: the coverage gate (scripts/tools/coverage_gate.py) and the zone of the second, non-UTC pass
COV_LINE   ?= 95
COV_BRANCH ?= 90
TEST_TZ    ?= America/Toronto

.PHONY: help venv venv-local test test-fast test-floors mutation lint typecheck imports format demo serve synth deploy destroy bench bench-tokens corpus corpus-offline eval-llm lock node-check clean

# Every target carries a "## what it does" comment; `make help` lists them all.
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(UV):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The local stack: the package (editable) with its `local` extra, every version pinned by the lock.
$(STAMP_LOCAL): pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install --quiet --python $(BIN)/python --constraint $(LOCK) -e '.[local]'
	rm -f $(VENV)/.installed-local-* && touch $(STAMP_LOCAL)

# Everything: every extra, test tools and the CDK included.
$(STAMP_DEV): pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install --quiet --python $(BIN)/python --constraint $(LOCK) -e '.[dev]'
	rm -f $(VENV)/.installed-dev-* $(VENV)/.installed-local-* && touch $(STAMP_DEV) $(STAMP_LOCAL)

venv-local: $(STAMP_LOCAL) ## create or update .venv with only what the local stack needs (demo, serve, console)

venv: $(STAMP_DEV) ## create or update .venv with the project and every extra (tests, CDK)

lock: | $(UV) ## re-resolve requirements.lock from pyproject.toml (newest allowed versions)
	$(UV) pip compile pyproject.toml --extra dev --universal --python-version 3.11 --no-header --upgrade --quiet -o $(LOCK)

# True floors: resolve every direct dependency to the lowest version pyproject.toml allows (their
# own dependencies as new as allowed), install that into build/floors-venv and run the tests there.
test-floors: | $(UV) ## install every direct dependency at its floor (build/floors-venv) and run the tests
	mkdir -p build
	$(UV) pip compile pyproject.toml --extra dev --resolution lowest-direct --python-version 3.11 --no-header --quiet \
		-o build/floors.txt
	test -x build/floors-venv/bin/python || $(UV) venv --quiet --python $(BIN)/python build/floors-venv
	$(UV) pip install --quiet --python build/floors-venv/bin/python -r build/floors.txt
	$(UV) pip install --quiet --python build/floors-venv/bin/python --no-deps -e .
	build/floors-venv/bin/python -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

test: $(STAMP_DEV) ## lint (ruff, mypy, import contracts), the whole suite with line and branch coverage (gated), then the unit tests under a non-UTC TZ
	$(MAKE) --no-print-directory lint
	mkdir -p build
	$(BIN)/python -m pytest -n 2 --dist loadfile --cov --cov-report=term:skip-covered \
		--cov-report=json:build/coverage.json $(PYTEST_ARGS)
	$(BIN)/python -m scripts.tools.coverage_gate build/coverage.json --line $(COV_LINE) --branch $(COV_BRANCH)
	TZ=$(TEST_TZ) $(BIN)/python -m pytest tests/unit -n 2 --dist loadfile -p no:cacheprovider $(PYTEST_ARGS)

test-fast: $(STAMP_DEV) ## run the unit tests only
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

mutation: $(STAMP_DEV) ## mutation scores of the core modules against their gate (slow; docs/reliability.md)
	$(UV) pip install --quiet --python $(BIN)/python --constraint $(LOCK) -e '.[dev,mutation]'
	$(BIN)/python -m scripts.tools.mutation_gate --run $(MUTATION_MODULES)

lint: $(STAMP_DEV) ## ruff check and format check, mypy, the import contracts (.pre-commit-config.yaml runs the same)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	PYTHONPATH=shared:. $(BIN)/lint-imports

typecheck: $(STAMP_DEV) ## mypy (with the pydantic plugin) over shared/, functions/ and infra/
	$(BIN)/mypy

imports: $(STAMP_DEV) ## check the import layering contracts (pyproject.toml [tool.importlinter])
	PYTHONPATH=shared:. $(BIN)/lint-imports

format: $(STAMP_DEV) ## format the code and apply ruff's safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

demo: $(STAMP_LOCAL) ## set up the local stack only and run the local demo (moto, offline coach, scheduler pump)
	$(BIN)/promptpipe demo

serve: $(STAMP_LOCAL) ## run the local server (the API, webhooks and console on localhost)
	$(BIN)/promptpipe serve

# Node 22+ is recommended (the CDK CLI calls Node 20 end-of-life); older Node still works: a warning.
node-check: ## check that Node.js is installed (warn below Node 22)
	@major=$$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0); \
	if [ "$$major" -eq 0 ]; then echo "error: Node.js is required for the CDK CLI (Node $(NODE_RECOMMENDED)+ recommended)" >&2; exit 1; fi; \
	if [ "$$major" -lt $(NODE_RECOMMENDED) ]; then \
		echo "warning: Node $$major is end-of-life for the CDK CLI; Node $(NODE_RECOMMENDED)+ is recommended (continuing)" >&2; \
	fi

node_modules/.bin/cdk:
	npm install --no-save --no-audit --no-fund --silent aws-cdk@2

# jsii repeats the end-of-life warning on every run; node-check has said it once.
CDK := PATH="$(CURDIR)/$(BIN):$$PATH" JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=$$(node -p 'process.versions.node.split(".")[0]') \
	node_modules/.bin/cdk

synth: $(STAMP_DEV) node-check node_modules/.bin/cdk ## cdk synth (installs the CDK CLI from npm into node_modules; Node 22+ recommended)
	$(CDK) synth --quiet $(CDK_ARGS)

# Refuses assets without bytecode (no Python 3.12 here) unless ALLOW_UNCOMPILED=1 (docs/platform.md#cdk-bundling).
deploy: $(STAMP_DEV) node-check node_modules/.bin/cdk ## cdk deploy (needs AWS credentials and a Python 3.12 to compile the assets)
	$(BIN)/python -m infra.bundling
	$(CDK) deploy $(CDK_ARGS)

destroy: $(STAMP_DEV) node-check node_modules/.bin/cdk ## cdk destroy (needs AWS credentials)
	$(CDK) destroy $(CDK_ARGS)

bench: $(STAMP_DEV) ## run the benchmarks (see docs/benchmarks.md)
	$(BIN)/python -m scripts.bench.calls
	$(BIN)/python -m scripts.bench.tokens --baseline $(TOKENS_BASELINE)

# The revision the token figures of docs/benchmarks.md are compared with (before the turn pipeline).
TOKENS_BASELINE ?= 7ae007d
bench-tokens: $(STAMP_DEV) ## model tokens per turn and LLM cost, before (TOKENS_BASELINE) and after
	$(BIN)/python -m scripts.bench.tokens --baseline $(TOKENS_BASELINE)

corpus: $(STAMP_DEV) ## play both corpus splits (built: gated; held_out: reported) with the competent-model stand-in (docs/offline-coach.md#the-two-splits)
	$(BIN)/python -m scripts.corpus.report $(CORPUS_ARGS)

corpus-offline: $(STAMP_DEV) ## play both corpus splits with the offline coach: parity figures and false praise (docs/offline-coach.md)
	$(BIN)/python -m scripts.corpus.offline $(CORPUS_ARGS)

# OPENAI_API_KEY, GENAI_MODEL (default gpt-4o-mini) and OPENAI_BASE_URL as for the functions; without a
# key it prints one line and exits 0. EVAL_ARGS="--only walk-yes week-move-it-to-7pm" plays a few;
# "--split held_out|all", "--repeat K" (pass^k), "--price-in/--price-out" (USD per 1M tokens).
eval-llm: $(STAMP_DEV) ## play the conversation corpus against a real model, pass^k and cost at its own price (OPENAI_API_KEY, GENAI_MODEL, OPENAI_BASE_URL)
	$(BIN)/python -m scripts.corpus.eval_llm $(EVAL_ARGS)

clean: ## remove .venv, build outputs and caches
	rm -rf $(VENV) cdk.out build node_modules .pytest_cache
