"""Client and Run on a stand-in API server serving recorded objects: submit, wait on watches, follow logs across a
restart, explain with reads RBAC refuses, stop and delete."""

from __future__ import annotations

import copy
import io
import threading
from typing import Any

import pytest
from hera.workflows import Container, Workflow

from hera_volcano import ClusterError, ValidationError
from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION, TASK_LABEL
from hera_volcano.client.resources import JOBS, NODES, PODS, QUEUES, WORKFLOW_TEMPLATES, WORKFLOWS
from tests.client.harness import client, finish, in_background, run_of
from tests.client.recorded import World, items
from tests.job_steps import job_step


def test_submit_creates_the_workflow_in_its_namespace_and_returns_its_generated_name(world: World) -> None:
    with Workflow(generate_name="hello-", namespace="argo", entrypoint="main") as w:
        Container(name="main", image="busybox:1.37.0")
    run = client(world, namespace=None).submit(w)
    assert (run.name, run.namespace) == ("hello-x7k2p", "argo")
    assert world.objects[WORKFLOWS]["hello-x7k2p"]["spec"]["entrypoint"] == "main"
    with pytest.raises(ValidationError, match="submits to namespace 'ml'"):
        client(world, namespace="ml").submit(w)


def test_submit_from_reads_the_template_first(world: World) -> None:
    c = client(world)
    with pytest.raises(ClusterError, match=r"workflowtemplates\.argoproj\.io volcano-mpi-hello not found"):
        c.submit_from("volcano-mpi-hello")
    template = {
        "metadata": {"name": "volcano-mpi-hello"},
        "spec": {"arguments": {"parameters": [{"name": "job-name"}]}},
    }
    world.put(WORKFLOW_TEMPLATES, template)
    with pytest.raises(ValidationError, match="workers: not declared"):
        c.submit_from("volcano-mpi-hello", {"workers": 3})
    assert WORKFLOWS not in world.objects, "nothing was created"
    run = c.submit_from("volcano-mpi-hello", {"job-name": "x"})
    created = world.objects[WORKFLOWS][run.name]
    assert created["spec"]["workflowTemplateRef"] == {"name": "volcano-mpi-hello"}


def test_submit_says_when_the_follower_program_is_not_installed_and_creates_nothing(world: World) -> None:
    """The workflow's followers mount the follower's program from a ConfigMap: submitting where it is missing is
    refused at once (each follower would fail at run time); with it, or without the right to read it, it goes."""
    import hera_volcano as hv
    from hera_volcano.client.resources import CONFIG_MAPS
    from hera_volcano.pods import program

    with Workflow(generate_name="hello-", namespace="argo", entrypoint="follow") as w:
        hv.follow_logs_template(job_step("train"), name="follow")
    c = client(world)
    with pytest.raises(ClusterError, match=f"ConfigMap {program.config_map_name()}\\) is not in namespace argo"):
        c.submit(w)
    template = {"metadata": {"name": "follows"}, "spec": w.to_dict()["spec"]}
    world.put(WORKFLOW_TEMPLATES, template)
    with pytest.raises(ClusterError, match="hera-volcano rbac"):
        c.submit_from("follows")
    assert WORKFLOWS not in world.objects, "nothing was created"
    world.put(CONFIG_MAPS, program.config_map("argo"))
    assert c.submit(w).name.startswith("hello-") and c.submit_from("follows").name
    world.remove(CONFIG_MAPS, program.config_map_name())
    world.refuse("get", CONFIG_MAPS)
    assert c.submit(w).name, "a submitter who may not read ConfigMaps is not stopped: the follower says it"


def test_submit_checks_the_program_an_mpi_masters_wait_mounts_without_a_follower(world: World) -> None:
    """A job step alone, no follower: the MPI master's wait for its workers runs the same program."""
    import hera_volcano as hv
    from hera_volcano.client.resources import CONFIG_MAPS
    from hera_volcano.pods import program

    job = hv.mpi_job(image="x:1", program=hv.Program.command(["a"]), service_account="sa")
    with Workflow(generate_name="bare-", namespace="argo", entrypoint="train") as w:
        hv.job_template(job, name="train", job_label="train")
    c = client(world)
    with pytest.raises(ClusterError, match=f"ConfigMap {program.config_map_name()}\\) is not in namespace argo"):
        c.submit(w)
    assert WORKFLOWS not in world.objects, "nothing was created"
    world.put(CONFIG_MAPS, program.config_map("argo"))
    assert c.submit(w).name.startswith("bare-")


def test_wait_follows_the_watches_to_the_end_and_keeps_jobs_the_exit_handler_deleted(world: World) -> None:
    run = run_of(world, "running")
    [job] = items("running", "jobs")
    out = io.StringIO()

    def later() -> None:
        world.remove(JOBS, job["metadata"]["name"])
        finish(world, "running", "Failed")

    started = threading.Event()

    class Progress(io.StringIO):
        def write(self, text: str) -> int:
            started.set()
            return out.write(text)

    thread = in_background(lambda: started.wait(10) and later())
    result = run.wait(timeout=30, progress=Progress())
    thread.join(10)
    assert result.phase == "Failed" and result.finished
    [seen] = result.jobs
    assert (seen.name, seen.phase, seen.running, seen.deleted) == (job["metadata"]["name"], "Running", 3, True)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"{run.name}: Running")
    assert lines[-2:] == [
        f"  job {seen.name} (mpi): Running, pods 3 running, 0 pending (deleted)",
        f"{run.name}: Failed",
    ]
    assert ("watch", WORKFLOWS, None) in world.calls and ("watch", JOBS, None) in world.calls


def test_wait_gives_up_after_its_timeout_or_when_the_workflow_is_deleted(world: World) -> None:
    run = run_of(world, "running")
    with pytest.raises(TimeoutError, match=r"has not finished after 0\.3 s"):
        run.wait(timeout=0.3)
    in_background(lambda: world.remove(WORKFLOWS, run.name))
    with pytest.raises(ClusterError, match="not found in namespace argo"):
        run.wait(timeout=10)


def test_logs_follow_the_master_across_a_restart_and_stop_when_the_job_completes(world: World) -> None:
    run = run_of(world, "running")
    pod = next(p for p in items("running", "pods") if p["metadata"]["name"].endswith("mpimaster-0"))
    name = pod["metadata"]["name"]
    [job] = items("running", "jobs")

    def restart() -> None:
        again = copy.deepcopy(pod)
        again["status"]["containerStatuses"][0].update(containerID="containerd://" + "b" * 64, restartCount=1)
        world.logs[(name, "mpimaster")] = ["2026-12-01T18:03:00Z Hello again"]
        world.after_log[(name, "mpimaster")] = complete
        world.put(PODS, again)

    def complete() -> None:
        done = copy.deepcopy(job)
        done["status"]["state"]["phase"] = "Completed"
        world.put(JOBS, done)

    world.logs[(name, "mpimaster")] = [
        "2026-12-01T18:02:12.000000001Z Hello world from processor w-0, rank 0 out of 2 processors",
        "2026-12-01T18:02:12.000000002Z Hello world from processor w-1, rank 1 out of 2 processors",
    ]
    world.after_log[(name, "mpimaster")] = restart
    assert list(run.logs()) == [
        f"=== logs of {name} (Running)",
        "Hello world from processor w-0, rank 0 out of 2 processors",
        "Hello world from processor w-1, rank 1 out of 2 processors",
        f"=== logs of {name} (Running)",
        "Hello again",
        f"Job {job['metadata']['name']} is Completed",
    ]


def test_logs_of_a_master_that_never_started_end_with_its_containers_tails(world: World) -> None:
    run = run_of(world, "tight")
    pod = next(p for p in items("tight", "pods") if p["metadata"]["name"].endswith("mpimaster-0"))
    name = pod["metadata"]["name"]
    world.logs[(name, "wait-for-workers")] = ["Only 0 of 2 workers Ready after 600 s"]
    in_background(lambda: finish(world, "tight", "Failed"))
    assert list(run.logs()) == [
        "Workflow is Failed",
        f"=== mpimaster never started in {name}",
        f"[pod/{name}/wait-for-workers] Only 0 of 2 workers Ready after 600 s",
    ]


def test_logs_without_follow_give_what_is_there(world: World) -> None:
    run = run_of(world, "running")
    name = next(p["metadata"]["name"] for p in items("running", "pods") if "mpimaster" in p["metadata"]["name"])
    world.logs[(name, "mpimaster")] = ["line 1", "line 2"]
    assert list(run.logs(follow=False)) == ["line 1", "line 2"]
    assert list(run.logs(follow=False, task="nosuchtask")) == []
    with pytest.raises(ValidationError):
        run.logs(task="Not A Name")


def test_explain_says_what_rbac_refused_and_explains_the_rest(world: World) -> None:
    run = run_of(world, "no-fit")
    world.refuse("list", NODES, "forbidden-list-nodes")
    world.refuse("get", QUEUES, "forbidden-get-queue")
    text = run.explain()
    assert "resource in cluster is overused: overused cpu" in text
    assert "- cpu: Volcano reports it short: resource in cluster is overused: overused cpu" in text
    assert (
        "Could not read nodes: forbidden: system:serviceaccount:argo:nobody may not list nodes at the cluster" in text
    )
    assert "Could not read queue default: forbidden: system:serviceaccount:argo:nobody may not get" in text


def test_explain_of_a_gang_that_cannot_fit(world: World) -> None:
    text = run_of(world, "no-fit").explain()
    assert "- cpu: the gang (4 pods) asks 3, but the one usable node has 2 allocatable" in text
    assert "Could not read" not in text


def test_status_stop_and_delete(world: World) -> None:
    run = run_of(world, "running")
    assert run.status().jobs[0].running == 3
    run.stop()
    assert world.objects[WORKFLOWS][run.name]["spec"]["shutdown"] == "Stop"
    run.delete()
    with pytest.raises(ClusterError, match="not found"):
        client(world).get(run.name)
    with pytest.raises(ClusterError, match="not found"):
        run.explain()


def lead(world: World, job: dict[str, Any], task: str, line: str, *, created: str | None = None) -> str:
    """``job`` (stored) names ``task`` its leading task, which gets a running pod of its own logging ``line``;
    returns that pod's name."""
    job = copy.deepcopy(job)
    job["metadata"]["annotations"] = {LEAD_TASK_ANNOTATION: task}
    if created:
        job["metadata"].update(name=f"{job['metadata']['name']}-{task}", creationTimestamp=created)
    world.put(JOBS, job)
    pod = copy.deepcopy(next(p for p in items("running", "pods") if p["metadata"]["name"].endswith("mpimaster-0")))
    name = f"{job['metadata']['name']}-{task}-0"
    pod["metadata"].update(name=name, uid=f"uid-{task}")
    pod["metadata"]["labels"][TASK_LABEL] = task
    pod["metadata"]["labels"]["volcano.sh/job-name"] = job["metadata"]["name"]
    pod["spec"]["containers"][0]["name"] = task
    pod["status"]["containerStatuses"][0]["name"] = task
    world.put(PODS, pod)
    world.logs[(name, task)] = [line]
    return name


def test_logs_follow_the_task_the_newest_job_names_its_lead(world: World) -> None:
    run = run_of(world, "running")
    [job] = items("running", "jobs")
    mpimaster = next(p["metadata"]["name"] for p in items("running", "pods") if "mpimaster" in p["metadata"]["name"])
    world.logs[(mpimaster, "mpimaster")] = ["2026-12-01T18:15:00Z from the mpi master"]
    master = lead(world, job, "master", "2026-12-01T18:15:00Z from the pytorch master")

    def complete() -> None:
        done = copy.deepcopy(world.objects[JOBS][job["metadata"]["name"]])
        done["status"]["state"]["phase"] = "Completed"
        world.put(JOBS, done)

    world.after_log[(master, "master")] = complete
    assert list(run.logs()) == [
        f"=== logs of {master} (Running)",
        "from the pytorch master",
        f"Job {job['metadata']['name']} is Completed",
    ]
    assert list(run.logs(follow=False)) == ["2026-12-01T18:15:00Z from the pytorch master"]
    assert list(run.logs(follow=False, task="mpimaster")) == ["2026-12-01T18:15:00Z from the mpi master"]
    lead(world, job, "chief", "from the chief", created="2099-01-01T00:00:00Z")  # after the recorded job
    assert list(run.logs(follow=False)) == ["from the chief"], "the newest job's lead"


def test_logs_of_one_job_by_name_among_jobs_that_share_their_label(world: World) -> None:
    """A loop's iterations (or a retried step's attempts) create jobs with one label: job_name picks one of them,
    as status names it, where the newest alone would be shown otherwise."""
    run = run_of(world, "running")
    [job] = items("running", "jobs")
    first = job["metadata"]["name"]
    lead(world, job, "master", "2026-12-01T18:15:00Z the first iteration")
    second = lead(world, job, "chief", "the second iteration", created="2099-01-01T00:00:00Z")
    assert list(run.logs(follow=False)) == ["the second iteration"], "the newest by default"
    assert list(run.logs(follow=False, job_name=first)) == ["2026-12-01T18:15:00Z the first iteration"]
    assert list(run.logs(follow=False, job_name=second.removesuffix("-chief-0"))) == ["the second iteration"]
    assert list(run.logs(follow=False, job_name="no-such-job")) == []

    def complete() -> None:
        done = copy.deepcopy(world.objects[JOBS][first])
        done["status"]["state"]["phase"] = "Completed"
        world.put(JOBS, done)

    world.after_log[(f"{first}-master-0", "master")] = complete
    followed = list(run.logs(job_name=first))
    assert "the first iteration" in followed and f"Job {first} is Completed" in followed, followed
    assert not any("second" in line for line in followed), followed
    with pytest.raises(ValidationError, match="job_name"):
        run.logs(job_name="Not A Name")


def test_logs_of_a_job_that_names_no_lead_follow_the_mpi_master(world: World) -> None:
    run = run_of(world, "running")
    for job in items("running", "jobs"):  # as a job made before jobs named their lead
        job["metadata"].pop("annotations", None)
        world.put(JOBS, job)
    name = next(p["metadata"]["name"] for p in items("running", "pods") if "mpimaster" in p["metadata"]["name"])
    world.logs[(name, "mpimaster")] = ["the mpi master"]
    assert list(run.logs(follow=False)) == ["the mpi master"]
    assert ("log", PODS, f"{name}/log") in world.calls


def test_a_created_cron_and_the_listed_runs_are_typed(world: World) -> None:
    c = client(world)
    cron = c.create_cron(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "CronWorkflow",
            "metadata": {"name": "nightly"},
            "spec": {"schedules": ["0 2 * * *"], "workflowSpec": {"entrypoint": "main"}},
        }
    )
    assert (cron.name, cron.namespace, cron.schedules) == ("nightly", "argo", ("0 2 * * *",))
    assert cron.manifest["kind"] == "CronWorkflow"
    preview = c.preview_from_cron("nightly")
    assert preview["metadata"]["generateName"] == "nightly-" and "nightly" not in world.objects.get(WORKFLOWS, {})
    run = c.submit_from_cron("nightly")
    old = {"name": "old", "creationTimestamp": "2026-01-01T00:00:00Z"}
    world.put(WORKFLOWS, {"metadata": old, "status": {"phase": "Failed", "message": "no", "finishedAt": "x"}})
    world.objects[WORKFLOWS][run.name]["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    listed = c.workflows()
    assert [(w.name, w.phase) for w in listed] == [(run.name, "Pending"), ("old", "Failed")], "newest first"
    assert (listed[1].message, listed[1].finished) == ("no", "x")
