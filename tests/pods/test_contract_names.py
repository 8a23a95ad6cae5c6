"""Each environment variable a pod program reads is spelled once, in its settings class: the builders write them with
the class's ``to_env()``, the pod reads them with its ``from_env()``, lint asks the class. A name spelled anywhere else
in ``hera_volcano/`` or ``tests/`` (outside the class's own tests) is a second copy that can drift.

A pod program's settings class joins the table :data:`CONTRACTS` as one more row: the class (its ``NAMES``: each a
variable's name, or with a trailing ``_`` a prefix of names) and the test files that may spell them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.pods.launcher import LaunchSettings
from hera_volcano.pods.sweep import PickSettings
from hera_volcano.pods.workers import WaitSettings

ROOT = Path(__file__).resolve().parents[2]
#: Where a name may not be spelled (outside its class): every source, script and test of the project.
SEARCHED = ("hera_volcano", "tests")
SUFFIXES = (".py", ".sh")


@dataclass(frozen=True)
class Contract:
    """A pod program's settings class, and the test files that may spell its names (its own tests)."""

    settings: type
    tests: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        names = getattr(self.settings, "NAMES", ())
        assert names and all(isinstance(n, str) and re.fullmatch(r"[A-Z][A-Z0-9_]*", n) for n in names), names
        return tuple(names)

    def pattern(self) -> re.Pattern[str]:
        words = [re.escape(n) + ("" if n.endswith("_") else r"(?![A-Za-z0-9_])") for n in self.names]
        return re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(words) + ")")

    def own_lines(self) -> tuple[Path, range]:
        """The class's file and lines (1-based): where its names live."""
        lines, first = inspect.getsourcelines(self.settings)
        return Path(inspect.getsourcefile(self.settings) or "").resolve(), range(first, first + len(lines))


CONTRACTS = (
    Contract(WaitSettings, tests=("tests/pods/test_workers.py",)),
    Contract(LaunchSettings, tests=("tests/builders/test_launcher.py",)),
    Contract(CheckpointSettings, tests=("tests/pods/test_checkpoints.py",)),
    Contract(PickSettings, tests=("tests/pods/test_sweep.py",)),
)


def sources() -> Iterator[Path]:
    for top in SEARCHED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                yield path


def spelled(contract: Contract) -> list[str]:
    """``file:line: text`` of each name of ``contract`` spelled outside its class and its tests."""
    pattern = contract.pattern()
    home, own = contract.own_lines()
    allowed = {(ROOT / t).resolve() for t in contract.tests}
    found = []
    for path in sources():
        if path.resolve() in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not (path.resolve() == home and number in own):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.settings.__name__)
def test_a_pod_programs_variables_are_spelled_only_in_its_settings_class(contract: Contract) -> None:
    assert not spelled(contract), f"use {contract.settings.__name__}'s names (to_env, from_env, its constants)"


def test_the_search_finds_a_name_spelled_elsewhere(tmp_path: Path) -> None:
    """The check itself: a copy of a name is caught, a longer name that contains it is not."""
    pattern = CONTRACTS[0].pattern()
    name = CONTRACTS[0].names[0]
    assert pattern.search(f'env["{name}"]') and pattern.search(f"${{{name}}}")
    assert not pattern.search(f"MY_{name}") and not pattern.search(f"{name}S2")
