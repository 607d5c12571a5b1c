# The two commands of the quick start: `make up` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: bootstrap up down status test test-unit lint fmt bench

bootstrap:
	@./scripts/bootstrap.sh

up: bootstrap
	$(VENV)/bin/livekg up

down: bootstrap
	$(VENV)/bin/livekg down

status: bootstrap
	$(VENV)/bin/livekg status

test: bootstrap
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy
	$(PY) -m pytest -q -p no:cacheprovider

test-unit: bootstrap
	$(PY) -m pytest -q -m "not integration and not e2e" -p no:cacheprovider

lint: bootstrap
	$(PY) -m ruff check . && $(PY) -m ruff format --check .

fmt: bootstrap
	$(PY) -m ruff check --fix . && $(PY) -m ruff format .

bench: bootstrap
	$(VENV)/bin/livekg bench pipeline --events 20000 --json
