"""Fixtures for the tests that run against a real kube-apiserver (see README.md beside this file).

One control plane per test session: built by cluster/build.sh (a no-op when up to date), started once, with the
pinned Argo and Volcano CRDs installed and the namespace ``argo`` created, shared by every test here.
If it cannot be built or started the tests fail with the reason; HERA_VOLCANO_SKIP_CLUSTER=1 skips them instead.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers here, whatever pytest's import mode

from controlplane import ControlPlane, ControlPlaneError, build

SKIP_ENV = "HERA_VOLCANO_SKIP_CLUSTER"

try:
    import kubernetes  # noqa: F401

    collect_ignore: list[str] = []
except ImportError:  # the test modules import it: leave them out, test_cluster_requirements.py says why
    collect_ignore = ["test_cluster_infra.py", "test_cluster_manifests.py", "test_cluster_rbac.py"]


HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: needs the real control plane of tests/cluster (slow to start)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this folder `cluster`, so that `-m "not cluster"` leaves them out."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.cluster)


def _skip_requested() -> bool:
    return os.environ.get(SKIP_ENV) == "1"


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """A running kube-apiserver (RBAC) with the Argo and Volcano CRDs and namespace ``argo``; admin access."""
    if _skip_requested():
        pytest.skip(f"{SKIP_ENV}=1: the cluster tests are skipped")
    if collect_ignore:
        pytest.fail(
            "the cluster tests need the `kubernetes` package: pip install -e '.[cluster]' (or '.[test]'); "
            f"or set {SKIP_ENV}=1 to skip them",
            pytrace=False,
        )
    try:
        binaries = build()
        cp = ControlPlane(binaries).start()
    except ControlPlaneError as e:
        pytest.fail(f"no test control plane: {e}", pytrace=False)
    try:
        cp.install_crds()
        cp.ensure_namespace("argo")
    except Exception as e:
        cp.stop()
        pytest.fail(f"the test control plane started but could not be set up: {e}", pytrace=False)
    yield cp
    cp.stop()


@pytest.fixture
def namespace(control_plane: ControlPlane, request: pytest.FixtureRequest) -> str:
    """A fresh namespace for one test (never deleted: with no controller-manager it would stay Terminating)."""
    base = "".join(c if c.isalnum() else "-" for c in request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{base}-{uuid.uuid4().hex[:6]}"
    control_plane.ensure_namespace(name)
    return name
