"""What a sweep is, apart from how it runs: the one record (:class:`SweepSpec`) that :func:`hera_volcano.sweep` makes
and both its template (on the cluster) and a local run (:func:`hera_volcano.run_local`, trial by trial) read, so
that no setting is typed twice or read one way here and another there.

This module imports no ``hera.workflows``: a local run reads it without Hera's models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hera_volcano.volcano.job import VolcanoJob

#: The sweep's input holding a run-time list of trials (:class:`~hera_volcano.TrialsFrom`): its call passes the
#: expression on the cluster; a local run is given the list itself under this name.
TRIALS_INPUT = "sweep-trials"


@dataclass(frozen=True)
class SweepSpec:
    """A sweep's settings, checked: the job, the reported values (``outputs``: the objective first), how the best
    is chosen, how many trials may fail, the swept ``parameters`` and the list of trials (``trials``: compact JSON,
    None for a run-time list, given as the input :data:`TRIALS_INPUT`), and the sweep's own ``inputs`` (the job's
    inputs it does not sweep, each with its default's text, None: required).

    ``parallelism`` bounds the trials running at once on the cluster; a local run runs them one after another."""

    name: str
    job: VolcanoJob
    objective: str
    direction: str
    outputs: tuple[str, ...]
    max_failures: int
    parallelism: int | None
    parameters: tuple[str, ...]
    trials: str | None
    inputs: Mapping[str, str | None]


def spec_of(found: object) -> SweepSpec | None:
    """The settings of the sweep ``found`` is (what ``hv.sweep`` returns, or the settings themselves), else None."""
    if isinstance(found, SweepSpec):
        return found
    spec = getattr(found, "sweep_spec", None)
    return spec if isinstance(spec, SweepSpec) else None
