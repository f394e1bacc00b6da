# The two commands a new user runs: `make demo` (set up + live demo) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench kafka-stop clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q --upgrade pip
	$(BIN)/pip install --disable-pip-version-check -e '.[dev,export]'
	touch $(STAMP)

## setup: virtual environment, facestream and its dependencies (PyTorch too: the export tests need it)
setup: $(STAMP)

## demo: set up, fetch the model and photos, start Kafka, stream two cameras, print events live
demo: setup
	$(BIN)/facestream demo

## test: set up, start the local Kafka broker, run the whole test suite against it
test: setup
	$(BIN)/facestream models fetch
	$(BIN)/facestream samples fetch
	$(BIN)/facestream kafka start
	$(BIN)/python -m pytest

## bench: CPU throughput of the detector on the local broker (writes bench/results/)
bench: setup
	$(BIN)/facestream kafka start
	$(BIN)/python bench/detector_backlog.py

kafka-stop:
	-$(BIN)/facestream kafka stop

clean: kafka-stop
	rm -rf $(VENV) .pytest_cache
