"""Every builder's ``queue=`` takes a Queue as well as a queue's name: the job names the queue."""

from __future__ import annotations

import pytest

from hera_volcano import (
    Pipeline,
    PodSettings,
    Queue,
    ValidationError,
    VolcanoJob,
    VolcanoTask,
    batch_job,
    mpi_job,
    pytorch_job,
    tensorflow_job,
)
from hera_volcano.builders.pipeline_entries import PipelineJob
from hera_volcano.builders.program import Program
from tests.conftest import manifests

GPU_TEAM = Queue("gpu-team", weight=2, capability={"cpu": "64", "nvidia.com/gpu": 8})
TEMPLATE = {"spec": {"containers": [{"name": "main", "image": "busybox:1.37.0"}]}}


@pytest.mark.parametrize(
    "build",
    [
        lambda queue: mpi_job(
            name="hello", image="volcanosh/example-mpi:0.0.3", program=Program.command(["mpirun"]), queue=queue
        ),
        lambda queue: pytorch_job(
            name="train", image="pytorch:2", program=Program.command(["python", "train.py"]), queue=queue
        ),
        lambda queue: tensorflow_job(
            name="train", image="tensorflow:2", program=Program.command(["python", "train.py"]), queue=queue
        ),
        lambda queue: VolcanoJob(name="job", tasks=[VolcanoTask("main", TEMPLATE)], queue=queue),
    ],
    ids=["mpi_job", "pytorch_job", "tensorflow_job", "VolcanoJob"],
)
def test_gang_builders_take_a_queue_or_its_name(build: object) -> None:
    assert callable(build)
    by_queue, by_name = build(GPU_TEAM), build("gpu-team")
    assert by_queue.to_dict()["spec"]["queue"] == "gpu-team"
    assert by_queue.to_dict() == by_name.to_dict()


def test_batch_jobs_take_a_queue_and_share_a_template_with_jobs_naming_it() -> None:
    prep = PipelineJob("prep", batch_job(image="python:3.12", program=Program.command(["true"]), queue=GPU_TEAM))
    train = PipelineJob(
        "train", batch_job(image="python:3.12", program=Program.command(["true"]), queue="gpu-team"), after=["prep"]
    )
    jobs = manifests(Pipeline([prep, train]).workflow("queued"))
    assert [job["spec"]["queue"] for job in jobs] == ["gpu-team"]  # one template for both


def test_a_queue_of_the_wrong_type_is_refused_naming_the_argument() -> None:
    with pytest.raises(ValidationError, match="queue: must be a queue name or a Queue, not dict"):
        VolcanoJob(name="job", tasks=[VolcanoTask("main", TEMPLATE)], queue={"name": "gpu-team"})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="queue: must be a queue name or a Queue, not int"):
        PipelineJob("prep", batch_job(image="python:3.12", program=Program.command(["true"]), queue=3))  # type: ignore[arg-type]


TWO_GPUS = Queue("small", capability={"nvidia.com/gpu": 2})


def test_a_gang_asking_more_than_its_queue_s_capability_is_refused_where_the_two_meet() -> None:
    """8 GPUs (a master and a worker of 4) into a queue of 2: Volcano never admits the gang; the job waits a day."""
    rule = r"spec\.queue: names queue 'small', whose capability of nvidia\.com/gpu is 2, but the gang's minimum"
    with pytest.raises(ValidationError, match=rule + r" \(2 pods\) asks 8"):
        pytorch_job(
            image="pytorch:2", program=Program.command(["train"]), workers=1, queue=TWO_GPUS, pod=PodSettings(gpus=4)
        )
    with pytest.raises(ValidationError, match=rule + r" \(4 pods\) asks 4"):
        batch_job(image="x:1", program=Program.command(["a"]), replicas=4, queue=TWO_GPUS, pod=PodSettings(gpus=1))
    template = {"spec": {"containers": [{"name": "m", "image": "x:1", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    with pytest.raises(ValidationError, match=rule + r" \(3 pods\) asks 3"):
        VolcanoJob(name="j", tasks=[VolcanoTask("m", template, replicas=5)], min_available=3, queue=TWO_GPUS)
    # the gang's minimum is what must fit: two of five pods do
    VolcanoJob(name="j", tasks=[VolcanoTask("m", template, replicas=5)], min_available=2, queue=TWO_GPUS)
    batch_job(image="x:1", program=Program.command(["a"]), replicas=2, queue=TWO_GPUS, pod=PodSettings(gpus=1))
    batch_job(image="x:1", program=Program.command(["a"]), replicas=4, queue="small", pod=PodSettings(gpus=1))
