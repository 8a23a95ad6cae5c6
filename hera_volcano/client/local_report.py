"""Rank 0's report in a local run, read from its output by the follower's rules: each report line
(:func:`hera_volcano.pods.reports.keep_line`, the last value of a name winning, a refused line refusing its name)
and each metric line (:func:`hera_volcano.pods.progress.parse_metric`, a refused one ignored, as the follower
ignores it). What the job's outputs then are is :func:`hera_volcano.pods.progress.gather`'s, as on the cluster."""

from __future__ import annotations

from dataclasses import dataclass, field

from hera_volcano.pods.progress import Gathered, Number, ProgressError, gather, parse_metric
from hera_volcano.pods.reports import keep_line


@dataclass(frozen=True)
class RankZero:
    """What rank 0 printed: its reported values, the names whose line was refused (name: why; ``""`` for a line
    whose name is none a report may carry), and its last metrics."""

    values: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, Number] = field(default_factory=dict)

    def outputs(self, listed: tuple[str, ...]) -> Gathered:
        """The job's outputs when a task lists ``listed``, by the follower's rule."""
        return gather(self.values, self.refused, self.metrics, listed)


def read_rank_zero(text: str) -> RankZero:
    """Every marker line of ``text`` (rank 0's standard output), as the follower reads them."""
    report = RankZero()
    for line in text.split("\n"):
        keep_line(line, report.values, report.refused)
        try:
            metric = parse_metric(line)
        except ProgressError:
            continue
        if metric is not None:
            report.metrics[metric[0]] = metric[1]
    return report
