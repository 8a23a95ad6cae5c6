"""The text ``status`` and ``explain`` print, on recorded runs."""

from __future__ import annotations

from hera_volcano.client.explain import Unreadable, explain
from hera_volcano.client.report import format_explanation, format_result
from hera_volcano.client.result import result_of
from tests.client.recorded import items, load, observed


def names(scenario: str) -> tuple[str, str, str]:
    """The generated names of the scenario's Workflow, Volcano Job and PodGroup."""
    workflow, [job] = load(f"{scenario}/workflow.json"), items(scenario, "jobs")
    groups = items(scenario, "podgroups")
    return workflow["metadata"]["name"], job["metadata"]["name"], groups[0]["metadata"]["name"] if groups else ""


def test_status_prints_the_workflow_its_steps_and_its_jobs() -> None:
    workflow, job, _ = names("succeeded")
    text = format_result(result_of(load("succeeded/workflow.json"), items("succeeded", "jobs")))
    assert text.splitlines()[0] == f"Workflow {workflow} in argo: Succeeded"
    assert "  submit-job: Succeeded" in text.splitlines()
    assert text.endswith(f"Volcano Jobs:\n  job {job} (mpi): Completed, pods 0 running, 0 pending\n")


def test_explain_on_the_gang_that_cannot_fit() -> None:
    workflow, job, group = names("no-fit")
    events = items("no-fit", "events")
    last = max(e["lastTimestamp"] for e in events)
    count = {e["type"]: e["count"] for e in events}
    assert format_explanation(explain(observed("no-fit"))) == "\n".join(
        [
            f"Workflow {workflow} in argo: Running",
            "  follow-logs: Running",
            "  submit-job: Running",
            "",
            f"Volcano Job {job} (mpi): Pending, pods 0 running, 0 pending; minAvailable 4",
            f"  PodGroup {group}: Pending, minMember 4, queue default",
            f"    event Unschedulable (Normal, {count['Normal']}x, last {last}): resource in cluster is overused:"
            " overused cpu",
            f"    event Unschedulable (Warning, {count['Warning']}x, last {last}): 0/0 tasks in gang unschedulable:"
            " pod group is not ready, 4 minAvailable",
            "  queue default: Open; capability: no limit; allocated: cpu 0, memory 0",
            "  the gang asks: cpu 3, pods 4",
            "  each pod asks: mpimaster: pods 1; mpiworker: cpu 1, pods 1",
            "  nodes: 1 usable of 1; allocatable: cpu 2, ephemeral-storage 39Gi, memory 7.8Gi, pods 110",
            "  Why it does not start, and what to change:",
            "    - cpu: the gang (4 pods) asks 3, but the one usable node has 2 allocatable",
            "      change: ask for less per pod, or run fewer pods (workers), or add nodes",
            "",
        ]
    )


def test_explain_lists_what_it_could_not_read_at_the_end() -> None:
    reason = "forbidden: system:serviceaccount:argo:ci may not list nodes at the cluster scope"
    text = format_explanation(explain(observed("no-fit", nodes=Unreadable("nodes", reason))))
    assert "  nodes: could not be read (below)\n" in text
    assert text.endswith(f"\nCould not read nodes: {reason}\n")


def test_explain_on_a_finished_run_shows_no_old_scheduling_events() -> None:
    text = format_explanation(explain(observed("succeeded")))
    assert "- workflow: has finished (Succeeded): nothing is waiting" in text
    assert "PodGroup: none: Volcano removes it once the job has finished" in text
    assert "event " not in text and "Why it does not start" not in text


def test_explain_on_a_pending_gang_shows_its_unplaced_pods_and_their_events() -> None:
    text = format_explanation(explain(observed("tight")))
    lines = text.splitlines()
    worker = next(i for i, line in enumerate(lines) if line.startswith("  pod ") and "mpiworker-1" in line)
    assert lines[worker].endswith("(mpiworker): Pending")
    assert lines[worker + 1] == "    not scheduled (Unschedulable): 0/2 nodes are unavailable: 2 Insufficient cpu."
    assert lines[worker + 2].startswith("    event FailedScheduling (Warning, 1x, last ")
    assert "    condition Unschedulable=True (NotEnoughResources): 1/3 tasks in gang unschedulable" in text
