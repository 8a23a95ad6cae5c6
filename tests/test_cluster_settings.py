"""The e2e cluster's controller settings: the programs' own defaults, stated, and the override `make bench` uses."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "cluster" / "e2e"))
import layout


def test_argo_runs_with_its_defaults_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERA_VOLCANO_ARGO_SETTINGS", raising=False)
    assert layout.argo_settings() == (layout.ARGO_FLAGS, layout.ARGO_ENV)
    assert layout.settings()["argo workflow-controller"] == {
        "workflow-workers": "32",
        "qps": "20",
        "burst": "30",
        "DEFAULT_REQUEUE_TIME": "10s",
        "ARGO_PROGRESS_PATCH_TICK_DURATION": "5s",
    }


def test_overrides_set_flags_and_upper_case_names_set_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERA_VOLCANO_ARGO_SETTINGS", "qps=100, burst=200,DEFAULT_REQUEUE_TIME=2s")
    flags, env = layout.argo_settings()
    assert flags == {"workflow-workers": "32", "qps": "100", "burst": "200"}
    assert env == {"DEFAULT_REQUEUE_TIME": "2s", "ARGO_PROGRESS_PATCH_TICK_DURATION": "5s"}


def test_a_malformed_override_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERA_VOLCANO_ARGO_SETTINGS", "qps")
    with pytest.raises(ValueError, match="'qps' is not NAME=VALUE"):
        layout.argo_settings()


def test_the_node_takes_as_many_pods_as_its_pod_network_has_addresses_for() -> None:
    """The batched scenarios run their pods at once on one node: above Kubernetes' default of 110, within the /24."""
    import ipaddress

    usable = ipaddress.ip_network(layout.POD_CIDR).num_addresses - 3  # network, gateway (the node), broadcast
    assert 110 < layout.MAX_PODS <= usable
