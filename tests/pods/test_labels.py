"""A job's identity: the labels on it, on its pods and its step's pod, the selectors that find them, and a selector
read back, in one place for the templates, the follower, the client and lint."""

from __future__ import annotations

import pytest

from hera_volcano.pods.labels import JobIdentity


def test_labels_and_selectors_of_a_job() -> None:
    identity = JobIdentity("wf", "mpi")
    assert identity.job_labels() == {"workflows.argoproj.io/workflow": "wf", "hera-volcano/job": "mpi"}
    assert identity.pod_labels() == {"hera-volcano/workflow": "wf", "hera-volcano/job": "mpi"}
    assert identity.jobs_selector() == "workflows.argoproj.io/workflow=wf,hera-volcano/job=mpi"
    assert identity.pods_selector() == "hera-volcano/workflow=wf,hera-volcano/job=mpi"
    assert JobIdentity("wf").jobs_selector() == "workflows.argoproj.io/workflow=wf", "every job of the workflow"


@pytest.mark.parametrize(
    "identity", [JobIdentity("wf", "mpi"), JobIdentity("{{workflow.name}}", "{{inputs.parameters.job}}")]
)
def test_a_selector_reads_back_as_the_job_it_selects(identity: JobIdentity) -> None:
    assert JobIdentity.from_selector(identity.jobs_selector()) == identity
    assert JobIdentity.from_selector(identity.pods_selector()) == identity


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (" hera-volcano/job == train , x=y", JobIdentity("", "train")),
        ("workflows.argoproj.io/workflow=wf", None),
        ("hera-volcano/job", None),
        (None, None),
    ],
)
def test_selectors_written_by_hand(selector: object, expected: JobIdentity | None) -> None:
    assert JobIdentity.from_selector(selector) == expected
