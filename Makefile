# The two commands a new user runs: `make demo` (set up + live demo) and `make test`; `make help` lists the rest.
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pytest-xdist workers for `make test` (CONTRIBUTING.md): 4 on two cores, since the tests beside
# each other leave a quarter of the processors idle waiting on real-time streams with 3; 0 runs one
# process, for a test that misbehaves beside others.
TEST_WORKERS ?= 4
PIP := $(BIN)/pip install --disable-pip-version-check

.PHONY: help setup demo test test-fast lint screenshots bench soak kafka-stop clean

## help: this list (each target's `## ` comment)
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | awk '{i = index($$0, ": "); printf "  make %-10s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2)}'

# Every service (`[all]`: with search by face's index): what the demo needs.
$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) -q --upgrade pip
	$(PIP) -e '.[all]'
	touch $@

# Plus pytest and the export tools (PyTorch: a large download, cached by pip afterwards).
$(VENV)/.test: $(VENV)/.base
	$(PIP) -e '.[dev,export]'
	touch $@

## setup: virtual environment with facestream and everything the tests need
setup: $(VENV)/.test

## demo: set up, fetch the model and photos, start Kafka, stream two cameras, print events live
demo: $(VENV)/.base
	$(BIN)/facestream demo

## test: set up (with the Debian packages of the tests' servers), start Kafka, run the whole suite
test: $(VENV)/.test
	tests/system-packages.sh
	$(PIP) -q -e '.[faults]'
	deploy/helm/tools.sh $(abspath $(BIN))
	$(BIN)/facestream models fetch
	$(BIN)/facestream samples fetch
	$(BIN)/facestream kafka start
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

## test-fast: the quick unit tests: no broker, browser, containers, database server, camera, GPU, PyTorch or Helm
test-fast: $(VENV)/.test
	$(BIN)/facestream models fetch
	$(BIN)/facestream samples fetch
	$(BIN)/python -m pytest -m "not (kafka or e2e or browser or compose or postgres or rtsp or gpu or torch or helm or prometheus or slow)"

## lint: the formatter, the linter (ruff) and the type checker (mypy), configured in pyproject.toml, as CI runs them
lint: $(VENV)/.test
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/python .ci/typecheck.py

## screenshots: redraw docs/images/ (every page on a phone and at a desk) from a running demo, in Chromium
screenshots: $(VENV)/.test
	tests/system-packages.sh
	$(BIN)/facestream models fetch
	$(BIN)/facestream samples fetch
	$(BIN)/facestream kafka start
	FACESTREAM_SCREENSHOTS=$(abspath docs/images) $(BIN)/python -m pytest tests/e2e/test_demo.py -k streams_real_photos

## bench: the Kafka plumbing and CPU detector benchmarks on this machine (write bench/results/)
bench: $(VENV)/.test
	$(BIN)/facestream kafka start
	$(BIN)/python -m bench kafka
	$(BIN)/python -m bench backlog
	$(BIN)/python -m bench.report

## soak: an hour of the CPU pipeline at a steady load; memory, descriptors and lag must stay flat
soak: $(VENV)/.test
	$(BIN)/facestream models fetch
	$(BIN)/facestream samples fetch
	# A broker this starts gets its heap fixed and committed up front: its RSS then shows leaks rather
	# than the JVM growing its heap (the result records the broker's heap flags either way).
	FACESTREAM_KAFKA_HEAP="-Xms1g -Xmx1g -XX:+AlwaysPreTouch" $(BIN)/facestream kafka start
	$(BIN)/python -m bench soak

## kafka-stop: stop the local Kafka broker
kafka-stop:
	-$(BIN)/facestream kafka stop

## clean: stop Kafka, remove the virtual environment
clean: kafka-stop
	rm -rf $(VENV) .pytest_cache
