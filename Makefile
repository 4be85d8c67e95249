# Every target creates .venv and installs what it needs; re-running is cheap.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# make test JOBS=2 (or JOBS=auto) runs the tests in that many processes (pytest-xdist, each
# file in one process); the default, one process, prints each file's progress as it goes.
JOBS ?= 1
# Bytecode written and reused (even where the environment sets PYTHONDONTWRITEBYTECODE):
# otherwise every run compiles the package and rewrites every test module's asserts again,
# about 7 CPU-s of the suite (docs/contributing.md, the budget).
PYTEST = PYTHONDONTWRITEBYTECODE= QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --tb=short --durations=15 \
	$(if $(filter-out 1,$(JOBS)),-n $(JOBS) --dist loadfile)

.PHONY: run test test-slow lint typecheck bench clean devices-db validate

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,sass]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gpumodeler gui resources/examples/saxpy2-gtx970.gpm

# the lint and the type check, then the tests but the slow ones (benchmark sizes: make test-slow),
# randomised tests at their quick count (tests/repetitions.py)
test: lint typecheck
	$(PYTEST)

# every test: the slow ones too, and randomised tests at their full count
test-slow: $(STAMP)
	$(PYTEST) -m "slow or not slow"

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy on gpumodeler/core and gpumodeler/db ([tool.mypy] in pyproject.toml); part of make test
typecheck: $(STAMP)
	$(BIN)/mypy

# every model and a roofline against the measured runs of resources/validation (docs/validation.md)
validate: $(STAMP)
	$(BIN)/gpumodeler validate resources/validation/volkov2016.csv
	$(BIN)/gpumodeler validate resources/validation/amaris2018.csv
	$(BIN)/gpumodeler validate resources/validation/nvbench-pmpp.csv
	$(BIN)/gpumodeler validate resources/validation/h100-cuda-study.csv
	$(BIN)/gpumodeler validate resources/validation/a6000-sgemm.csv
	$(BIN)/gpumodeler validate resources/validation/h100-stream-occupancy.csv
	$(BIN)/gpumodeler validate resources/validation/v100-stream-grid.csv

# bytecode written and reused here too (as for the tests): each benchmark runs the CLI in
# processes of their own, and with PYTHONDONTWRITEBYTECODE set in the environment every one
# of them would compile the package again (the timings would depend on an earlier run)
bench: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python benchmarks/run_all.py

devices-db: $(STAMP)
	$(BIN)/python -m gpumodeler.db.build_devices resources/devices devices.db

clean:
	rm -rf $(VENV) build *.egg-info
