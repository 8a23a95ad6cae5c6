"""Collected even without the `kubernetes` package, so that its absence fails the run with a clear message."""

from __future__ import annotations

from controlplane import ControlPlane


def test_control_plane_is_ready(control_plane: ControlPlane) -> None:
    assert control_plane.server.startswith("https://127.0.0.1:")
    assert control_plane.request("GET", "/readyz") == "ok"
