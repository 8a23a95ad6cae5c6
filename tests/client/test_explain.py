"""Why a gang does not start, decided from objects Volcano wrote (recorded) and variants of them."""

from __future__ import annotations

import copy
from typing import Any

from hera_volcano.client.explain import Finding, NodesState, QueueState, Unreadable, explain, tolerates
from tests.client.recorded import items, load, observed


def only_gang(scenario: str, **changes: Any) -> Any:
    [gang] = explain(observed(scenario, **changes)).gangs
    return gang


def subjects(findings: tuple[Finding, ...]) -> list[str]:
    return [f.subject for f in findings]


def test_a_gang_asking_more_cpu_than_the_nodes_have_names_the_resource_and_the_amounts() -> None:
    gang = only_gang("no-fit")
    assert gang.stuck
    assert gang.podgroup.phase == "Pending"
    assert [(e.reason, e.message) for e in gang.podgroup.events if e.type == "Normal"] == [
        ("Unschedulable", "resource in cluster is overused: overused cpu")
    ]
    [finding] = gang.findings
    assert finding == Finding(
        "cpu",
        "the gang (4 pods) asks 3, but the one usable node has 2 allocatable",
        "ask for less per pod, or run fewer pods (workers), or add nodes",
    )


def test_a_gang_that_fits_in_total_but_not_at_once_is_a_packing_problem() -> None:
    gang = only_gang("tight")
    assert [c.type for c in gang.podgroup.conditions] == ["Unschedulable"]
    assert gang.podgroup.conditions[0].reason == "NotEnoughResources"
    unplaced = {p.name.rsplit("-", 2)[-2] + "-" + p.name.rsplit("-", 1)[-1]: p.why for p in gang.pods}
    assert unplaced["mpiworker-1"] == ("not scheduled (Unschedulable): 0/2 nodes are unavailable: 2 Insufficient cpu.",)
    [finding] = gang.findings
    assert finding.subject == "cpu"
    assert "do not fit the usable nodes all at once" in finding.problem
    assert "one mpiworker pod asking cpu 1500m" in finding.problem


def test_pods_volcano_cannot_create_say_why_without_gos_dump_of_the_error() -> None:
    gang = only_gang("no-account")
    [finding] = gang.findings
    assert finding.subject == "pods"
    assert finding.problem.startswith('Volcano cannot create them: Error creating pods: pods "')
    assert 'serviceaccount "argo" not found' in finding.problem
    assert "StatusError" not in finding.problem and "TypeMeta" not in finding.problem


def test_a_running_gang_is_not_stuck_and_a_finished_run_has_nothing_to_change() -> None:
    running = only_gang("running")
    assert not running.stuck and running.findings == () and running.pods == ()
    done = explain(observed("succeeded"))
    assert [f.problem for f in done.findings] == ["has finished (Succeeded): nothing is waiting"]
    assert all(g.findings == () for g in done.gangs)


def test_what_may_not_be_read_is_named_and_the_rest_still_explained() -> None:
    forbidden = Unreadable("nodes", "forbidden: ... may not list nodes at the cluster scope")
    queue = Unreadable("queue default", "forbidden: ... may not get queues.scheduling.volcano.sh")
    result = explain(observed("no-fit", nodes=forbidden, queues={"default": queue}))
    assert result.unreadable == (forbidden, queue)
    [gang] = result.gangs
    assert gang.nodes == forbidden and gang.queue == queue
    assert gang.podgroup is not None and gang.podgroup.events, "the PodGroup's events are read in the namespace"
    [finding] = gang.findings
    assert finding.problem == "Volcano reports it short: resource in cluster is overused: overused cpu"


def test_a_missing_or_closed_queue() -> None:
    assert subjects(only_gang("no-fit", queues={"default": None}).findings)[0] == "queue default"
    closed = load("no-fit/queue-default.json")
    closed["status"]["state"] = "Closed"
    gang = only_gang("no-fit", queues={"default": closed})
    assert gang.queue == QueueState("default", "Closed", {}, gang.queue.allocated)
    assert gang.findings[0].problem == "is Closed: it takes no new jobs"


def test_a_queue_capability_below_the_gang_or_used_up() -> None:
    queue = load("no-fit/queue-default.json")
    queue["spec"]["capability"] = {"cpu": "2"}
    never = only_gang("no-fit", queues={"default": queue}).findings[0]
    assert never.problem == "the gang (4 pods) asks 3, more than queue default may ever have (capability 2)"
    queue["spec"]["capability"] = {"cpu": "4"}
    queue["status"]["allocated"] = {"cpu": "2500m"}
    left = only_gang("no-fit", queues={"default": queue}).findings[0]
    assert (
        left.problem
        == "queue default (Open) has 1500m of its capability 4 left (2500m allocated); the gang (4 pods) asks 3"
    )


def test_nodes_not_ready_cordoned_or_tainted_are_not_counted_unless_tolerated() -> None:
    nodes = items("tight", "nodes")
    nodes[1]["spec"]["unschedulable"] = True
    nodes[0]["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    gang = only_gang("tight", nodes=nodes)
    assert isinstance(gang.nodes, NodesState) and (gang.nodes.usable, gang.nodes.total) == (0, 2)
    jobs = items("tight", "jobs")
    for task in jobs[0]["spec"]["tasks"]:
        task["template"]["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    gang = only_gang("tight", nodes=nodes, jobs=jobs)
    assert gang.nodes.usable == 1
    assert subjects(gang.findings) == ["cpu"]
    assert "one usable node has 2 allocatable" in gang.findings[0].problem


def test_tolerations_match_as_the_scheduler_matches_them() -> None:
    taint = {"key": "gpu", "value": "a100", "effect": "NoSchedule"}
    assert tolerates([{"operator": "Exists"}], taint)
    assert tolerates([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}], taint)
    assert tolerates([{"key": "gpu", "value": "a100"}], taint)
    assert not tolerates([{"key": "gpu", "value": "h100"}], taint)
    assert not tolerates([{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}], taint)


def test_a_pod_too_large_for_any_node() -> None:
    jobs = items("tight", "jobs")
    worker = jobs[0]["spec"]["tasks"][1]
    worker["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    gang = only_gang("tight", jobs=jobs, podgroups=[])
    assert gang.podgroup is None
    assert [f.problem for f in gang.findings] == [
        "the gang (3 pods) asks 6, but the 2 usable nodes have 3 allocatable in total",
        "each mpiworker pod asks 3, more than any node it may use has (2 at most): it fits no node",
    ]


def test_containers_waiting_to_start_say_what_to_check() -> None:
    pods = items("running", "pods")
    pods[0]["status"]["containerStatuses"][0]["state"] = {
        "waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "volcanosh/example-mpi:0.0.3"'}
    }
    pods[0]["status"]["phase"] = "Pending"
    gang = only_gang("running", pods=pods)
    assert gang.stuck
    [finding] = gang.findings
    assert finding.subject == f"pod {pods[0]['metadata']['name']}"
    assert finding.problem.startswith(
        f"container {pods[0]['spec']['containers'][0]['name']} waiting (ImagePullBackOff)"
    )
    assert "image name" in finding.change


def test_a_run_without_a_volcano_job_yet_says_which_steps_it_waits_on() -> None:
    workflow = copy.deepcopy(load("no-fit/workflow.json"))
    step = next(n for n in workflow["status"]["nodes"].values() if n["displayName"] == "submit-job")
    step.update(phase="Pending", message="Unschedulable: 0/1 nodes are available: 1 Insufficient memory.")
    result = explain(observed("no-fit", workflow=workflow, jobs=[]))
    assert result.gangs == ()
    [finding] = result.findings
    assert "has no Volcano Job yet" in finding.problem
    assert "submit-job is Pending: Unschedulable: 0/1 nodes are available" in finding.problem
