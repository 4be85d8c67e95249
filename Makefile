# Every target creates .venv and installs what it needs; re-running is cheap.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean devices-db

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,sass]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gpumodeler gui resources/examples/saxpy2-gtx970.gpm

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

devices-db: $(STAMP)
	$(BIN)/python -m gpumodeler.db.build_devices resources/devices devices.db

clean:
	rm -rf $(VENV) build *.egg-info
