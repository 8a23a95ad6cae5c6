# Every target sets itself up on a fresh machine: it creates .venv and installs the project when needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test test-full check unit debian-tools conformance test-cluster test-e2e test-scale e2e-unless-skipped cluster-up cluster-down bench render clean

# Set-up talks on stderr only, so `make run | argo submit -` stays clean on the first run too.
$(STAMP): pyproject.toml constraints.txt
	@echo "setting up $(VENV) (first run only)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]' >&2
	@touch $(STAMP)

## run: the MPI hello world: run on `make cluster-up`'s cluster when one is up (in a terminal), else printed for
## `argo submit -` (`make run | argo submit -n argo --watch -`)
run: $(STAMP)
	@$(PY) cluster/e2e/run.py

## test: ruff, mypy, pytest (with the real control plane), Argo's own validators, and the end-to-end suite; at the
## end, the minutes each stage took (tests/stages.py)
test: $(STAMP)
	@$(PY) tests/stages.py check unit test-cluster conformance e2e-unless-skipped

## check: ruff, mypy, the documentation site (mkdocs --strict: a broken link or stale API reference fails), and the
## wheel and sdist as PyPI would take them (built with the pinned setuptools, twine check)
check: $(STAMP) debian-tools
	$(PY) tests/pods/shellcheck.py
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	rm -rf .cache/dist
	$(PY) -m build --no-isolation --quiet --outdir .cache/dist .
	$(VENV)/bin/twine check --strict .cache/dist/*

## unit: pytest without the cluster suites and the tests that need Go (marked go: make conformance), two workers per
## core: many tests wait on a subprocess or a clock (measured on 2 cores: 3.6 min against 4.5 with one per core)
unit: $(STAMP) debian-tools
	$(VENV)/bin/pytest tests --ignore=tests/cluster --ignore=tests/e2e -n $$(( $$(nproc) * 2 ))

# Debian's shellcheck (the pod scripts, in check) and zsh (the completion script's test), and for the local runs'
# tests Open MPI, mpi4py and a CPU PyTorch (into the system python3, which those tests run ranks with), installed
# when missing.
DEBIAN_PACKAGES := shellcheck zsh openmpi-bin python3-mpi4py python3-torch
debian-tools:
	@missing=""; for package in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian's$$missing" >&2; \
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >&2; fi

## conformance: Argo's own validators (Go) on every rendered file, and the tests that hold lint to them (marked go)
conformance: $(STAMP)
	PYTHON=$(abspath $(PY)) bash conformance/check-all.sh
	$(VENV)/bin/pytest tests --ignore=tests/cluster --ignore=tests/e2e -m go

test-cluster: $(STAMP)
	bash cluster/build.sh control-plane
	$(VENV)/bin/pytest tests/cluster

## test-e2e: build and start a real single-node cluster (Kubernetes, Volcano, Argo 3.7 and 4.1), run the bundled
## workflows on it, tear it down (needs root and Linux)
test-e2e: $(STAMP)
	@$(PY) cluster/e2e/cli.py check
	@$(PY) tests/stages.py time "cluster build" bash cluster/build.sh node
	$(VENV)/bin/pytest tests/e2e --durations=20

## test-full: the end-to-end scenarios `make test` leaves out because they only measure size or load (20 gangs at
## once, the cost of waiting, Volcano's upstream examples beside ours; tests/e2e/README.md has the map)
test-full: $(STAMP)
	@$(PY) cluster/e2e/cli.py check
	bash cluster/build.sh node
	HERA_VOLCANO_TIER=full $(VENV)/bin/pytest tests/e2e --durations=20

## test-scale: the scale scenarios at full size (64 fake GPU nodes, 40 gangs, 30 waiting; tests/e2e/test_scale.py)
test-scale: $(STAMP)
	@$(PY) cluster/e2e/cli.py check
	bash cluster/build.sh node
	HERA_VOLCANO_SCALE=full HERA_VOLCANO_TIER=all $(VENV)/bin/pytest tests/e2e/test_scale.py -k v4.1.4

e2e-unless-skipped:
	@if [ "$${HERA_VOLCANO_SKIP_E2E:-}" = 1 ]; then \
		echo "HERA_VOLCANO_SKIP_E2E=1: the end-to-end suite (make test-e2e) is skipped"; \
	else $(MAKE) --no-print-directory test-e2e; fi

## cluster-up / cluster-down: the same cluster for you to try things on (prints what to export)
cluster-up: $(STAMP)
	@$(PY) cluster/e2e/cli.py check
	@bash cluster/build.sh node >&2
	@$(PY) cluster/e2e/cli.py up

cluster-down: $(STAMP)
	@$(PY) cluster/e2e/cli.py down

## bench: the performance tables (ratios measured side by side in one run): the library, the real cluster, the scale
bench: $(STAMP)
	$(PY) benchmarks/run.py
	@if $(PY) cluster/e2e/cli.py check 2>/dev/null; then bash cluster/build.sh node; fi
	$(PY) benchmarks/cluster.py
	$(PY) benchmarks/scale.py

## render: write workflows/ and rbac/ from the code
render: $(STAMP)
	$(VENV)/bin/hera-volcano render --bundled

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
