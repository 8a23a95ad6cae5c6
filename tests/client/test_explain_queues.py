"""Explain of a gang that waits for its queue: the queue's state, capability, deserved, guarantee and allocation,
what the gang asks, and the resource that does not fit (objects in queue_bound.py, made from recorded ones)."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from hera_volcano.client.explain import QUEUE_QUOTA, QueueState, Unreadable, explain, queue_refusal
from hera_volcano.client.report import format_explanation
from hera_volcano.client.resources import EVENTS, JOBS, NODES, PODGROUPS, QUEUES
from tests.client.harness import run_of
from tests.client.queue_bound import GPU, REFUSAL, objects, queue, queue_bound
from tests.client.recorded import World


def only_gang(observed: Any) -> Any:
    [gang] = explain(observed).gangs
    return gang


def test_the_queues_figures_are_read_from_the_queue_object() -> None:
    q = queue(deserved={GPU: "2"}, guarantee={"resource": {GPU: "1"}}, parent="research")
    q["status"]["inqueue"] = 2
    gang = only_gang(queue_bound(q))
    assert gang.queue == QueueState(
        "default",
        "Open",
        {"cpu": Fraction(16), GPU: Fraction(4)},
        {"cpu": Fraction(2), "memory": Fraction(0), GPU: Fraction(2)},
        {GPU: Fraction(2)},
        {GPU: Fraction(1)},
        "research",
        2,
    )
    assert gang.asks[GPU] == 3, "what the gang asks is its PodGroup's minResources"


def test_a_gang_whose_gpus_do_not_fit_what_is_left_of_its_queue() -> None:
    gang = only_gang(queue_bound(queue(deserved={GPU: "2"}, guarantee={"resource": {GPU: "1"}})))
    assert gang.stuck
    [finding] = gang.findings
    assert finding.subject == GPU
    assert finding.problem == (
        "queue default (Open) has 2 of its capability 4 left (2 allocated, deserved 2, guarantee 1); the gang"
        f" (4 pods) asks 3; Volcano: {REFUSAL}"
    )
    assert finding.change == "wait for the queue's other jobs to finish, or raise its capability"


def test_the_same_shortfall_is_found_without_the_schedulers_event() -> None:
    [finding] = only_gang(queue_bound(refusal=None)).findings
    assert (
        finding.problem == "queue default (Open) has 2 of its capability 4 left (2 allocated); the gang (4 pods) asks 3"
    )


def test_a_queue_that_fits_by_its_allocation_but_is_held_by_admitted_gangs() -> None:
    q = queue()
    q["status"]["allocated"] = {"cpu": "0", GPU: "0"}
    q["status"]["inqueue"] = 1
    [finding] = only_gang(queue_bound(q)).findings
    assert finding.subject == GPU
    assert finding.problem.startswith(
        f"queue default (Open) does not admit the gang ({REFUSAL}): the gang (4 pods) asks 3, the queue has"
        " capability 4, 0 allocated; the rest is held by the 1 gang(s) it admitted earlier"
    )
    assert "raise its capability" in finding.change


def test_a_refusal_for_a_resource_the_queue_sets_no_capability_of() -> None:
    q = queue(capability={"cpu": "16"}, parent="research")
    [finding] = only_gang(queue_bound(q)).findings
    assert finding.problem.startswith(
        f"queue default (Open, under research) does not admit the gang ({REFUSAL}): the gang (4 pods) asks 3, the"
        " queue has no capability, 2 allocated; with no capability of nvidia.com/gpu of its own"
    )
    assert finding.problem.endswith("; the capability of its parent research bounds it too")


def test_a_refusal_naming_no_resource_is_read_against_the_queues_capabilities() -> None:
    q = queue()
    q["status"]["allocated"] = {"cpu": "0", GPU: "0"}
    gang = only_gang(queue_bound(q, refusal=QUEUE_QUOTA))
    assert queue_refusal(gang.podgroup) == (QUEUE_QUOTA, ())
    assert [f.subject for f in gang.findings] == ["cpu", GPU], "each resource the queue caps and the gang asks"


def test_a_queue_that_cannot_be_read_still_says_what_volcano_reported() -> None:
    refused = Unreadable("queue default", "forbidden: ... may not get queues.scheduling.volcano.sh")
    gang = only_gang(queue_bound(queues={"default": refused}))
    assert [(f.subject, f.problem) for f in gang.findings] == [
        ("queue default", f"Volcano does not admit the gang to queue default: {REFUSAL}")
    ]


def test_a_gang_that_runs_is_not_held_by_its_queue() -> None:
    parts = objects()
    parts["podgroups"][0]["status"]["phase"] = "Running"
    q = queue()
    q["status"]["allocated"][GPU] = "4"
    gang = only_gang(queue_bound(q, podgroups=parts["podgroups"]))
    assert gang.findings == ()


def test_the_report_shows_the_queue_the_gang_and_the_finding() -> None:
    q = queue(deserved={GPU: "2"}, guarantee={"resource": {GPU: "1"}}, parent="research")
    q["status"]["inqueue"] = 2
    text = format_explanation(explain(queue_bound(q)))
    assert (
        "  queue default: Open; capability: cpu 16, nvidia.com/gpu 4; allocated: cpu 2, memory 0, nvidia.com/gpu 2;"
        " deserved: nvidia.com/gpu 2; guarantee: nvidia.com/gpu 1; parent: research;"
        " gangs admitted, not running yet: 2\n"
    ) in text
    assert "  the gang asks: cpu 3, nvidia.com/gpu 3, pods 4\n" in text
    assert "  each pod asks: mpimaster: pods 1; mpiworker: cpu 1, nvidia.com/gpu 1, pods 1\n" in text
    assert (
        "    - nvidia.com/gpu: queue default (Open, under research) has 2 of its capability 4 left (2 allocated,"
        f" deserved 2, guarantee 1); the gang (4 pods) asks 3; Volcano: {REFUSAL}\n"
    ) in text
    [event] = [e for e in queue_bound(q).events if e["type"] == "Normal"]
    assert f"event Unschedulable (Normal, {event['count']}x, last {event['lastTimestamp']}): {REFUSAL}" in text


def test_run_explain_reads_the_queue_from_the_api(world: World) -> None:
    run = run_of(world, "no-fit")
    parts = objects()
    for resource, key in ((NODES, "nodes"), (JOBS, "jobs"), (PODGROUPS, "podgroups"), (EVENTS, "events")):
        for obj in parts[key]:
            world.put(resource, copy.deepcopy(obj))
    world.put(QUEUES, queue())
    text = run.explain()
    assert "- nvidia.com/gpu: queue default (Open) has 2 of its capability 4 left (2 allocated)" in text
    assert (QUEUES, "default") in {(resource, name) for _, resource, name in world.calls}
