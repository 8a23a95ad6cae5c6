"""The stand-in API server each client test gets, closed after it (its streams ended, its slow calls answered)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.client.recorded import World


@pytest.fixture
def world() -> Iterator[World]:
    w = World()
    yield w
    w.close()
