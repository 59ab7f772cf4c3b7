# The contributor's lanes (CONTRIBUTING.md says what each runs and how long it takes). Each prepares .venv
# first, as infra/test and infra/demo do; nothing here needs AWS, Docker or the internet beyond PyPI.
PY := .venv/bin/python
WORKERS ?= 2

.PHONY: venv lint types static unit quick sim emulator e2e all demo matrix

venv:
	@bash -c 'source infra/bootstrap.sh'

lint: venv  ## ruff's lint and format check, the whole tree
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

types: venv  ## mypy over the product, the CLI, the simulators and the benches (pyproject.toml [tool.mypy])
	$(PY) -m mypy

static: venv  ## lint and types as CI runs them: tests/static, in the full suite (infra/test)
	$(PY) -m pytest -q -m static

unit: venv  ## pure logic: no emulator, no simulator, no network (tests/unit)
	$(PY) -m pytest -q -m unit -n $(WORKERS)

quick: lint types  ## what to run before every commit: the unit tests but the few slow ones
	$(PY) -m pytest -q -m "unit and not slow" -n $(WORKERS)

sim: venv  ## the platform simulators driven by the official SDKs (tests/sim)
	$(PY) -m pytest -q -m sim -n $(WORKERS)

emulator: venv  ## adapters against the local AWS emulator (tests/emulator)
	bash infra/test -m emulator

e2e: venv  ## the deployed template end to end (tests/e2e)
	bash infra/test -m e2e

all:  ## the whole suite as CI runs it (.ci/run)
	bash infra/test

demo:  ## the README's first command
	bash infra/demo

matrix:  ## every source to a target and every target from the sample, one demo each
	bash infra/demo --matrix
