# Every target sets itself up on a fresh machine: it creates .venv and installs the project when needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test check unit conformance test-cluster bench render clean

# Set-up talks on stderr only, so `make run | argo submit -` stays clean on the first run too.
$(STAMP): pyproject.toml constraints.txt
	@echo "setting up $(VENV) (first run only)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]' >&2
	@touch $(STAMP)

## run: print the MPI hello world Workflow (pipe it to `argo submit -`)
run: $(STAMP)
	@$(PY) -m hera_volcano.mpi_hello

## test: ruff, mypy, pytest (with the real control plane), and Argo's own validators
test: check unit test-cluster conformance

check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest tests --ignore=tests/cluster

conformance: $(STAMP)
	PYTHON=$(abspath $(PY)) bash conformance/check-all.sh

test-cluster: $(STAMP)
	bash cluster/build.sh
	$(VENV)/bin/pytest tests/cluster

## bench: the performance table (ratios measured side by side in one run)
bench: $(STAMP)
	$(PY) benchmarks/run.py

## render: write workflows/ and rbac/ from the code
render: $(STAMP)
	$(VENV)/bin/hera-volcano render

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
