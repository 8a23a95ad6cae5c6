"""The upstream multi-job examples, made safe: steps (1, then 2a and 2b) and a diamond DAG of small echo jobs.

Every job comes from ONE parametrised resource template (inputs ``message`` and ``task``) with the conditions,
ownership of ``job_template``, and a deadline of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.builders.pipeline import Pipeline
from hera_volcano.builders.pipeline_entries import PipelineJob
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask

if TYPE_CHECKING:
    from hera.workflows import Workflow

TEMPLATE = "hello-tmpl"
#: Upstream uses docker/whalesay, a schema-1 image that containerd 2.x and Docker 27+ refuse to pull.
HELLO_IMAGE = "busybox:1.37.0"


#: Each job's inputs: its pods' label and its name's middle (``task``), and what they print (``message``).
TASK = Placeholder.input("task", "hello")


def hello_job(prefix: str) -> VolcanoJob:
    """A 2-pod job (gang of 1, as upstream) named ``PREFIX-TASK-xxxxx`` whose pods print ``message``.

    No follower keeps a start limit here: a hello job that has not ended within 10 minutes is stuck, so its step
    fails then."""
    return VolcanoJob(
        generate_name=f"{prefix}-{TASK}-",
        deadline=600,
        min_available=1,
        scheduler_name="volcano",
        policies=[Policy(event="PodEvicted", action="RestartJob")],
        plugins=[Plugin.ssh(), Plugin.env(), Plugin.svc()],
        max_retry=1,
        queue="default",
        tasks=[
            VolcanoTask(
                name="default-hello",
                replicas=2,
                template={
                    "spec": {
                        # An echo calls no API: no token (the admission policy refuses the default account's).
                        "automountServiceAccountToken": False,
                        "containers": [
                            {
                                "name": "hello",
                                "image": HELLO_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "command": ["echo"],
                                "args": [Placeholder.input("message", "hello")],
                                "resources": {"requests": {"cpu": "100m"}},
                            }
                        ],
                        "restartPolicy": "OnFailure",
                    }
                },
            )
        ],
    )


def hello(job: VolcanoJob, name: str, message: str, task: str, after: Sequence[str] = ()) -> PipelineJob:
    return PipelineJob(
        name, job, {"message": message, "task": task}, after=tuple(after), template=TEMPLATE, job_label=TASK
    )


def steps_pipeline() -> Pipeline:
    job = hello_job("step-job")
    return Pipeline(
        [
            hello(job, "hello-1", "hello1", "hello1"),
            hello(job, "hello-2a", "hello2a", "hello2a", after=["hello-1"]),
            hello(job, "hello-2b", "hello2b", "hello2b", after=["hello-1"]),
        ]
    )


def dag_pipeline() -> Pipeline:
    job = hello_job("dag-job")
    return Pipeline(
        [
            hello(job, "A", "A", "aaa"),
            hello(job, "B", "B", "bbb", after=["A"]),
            hello(job, "C", "C", "ccc", after=["A"]),
            hello(job, "D", "D", "ddd", after=["B", "C"]),
        ]
    )


@dataclass(frozen=True)
class Bundled:
    """A bundled pipeline: its workflow name, how it is built, and how it is laid out."""

    name: str
    pipeline: Callable[[], Pipeline]
    as_steps: bool

    def build(
        self, *, namespace: str = NAMESPACE, service_account: str = SERVICE_ACCOUNT, template: bool = False
    ) -> Workflow:
        return self.pipeline().workflow(
            self.name, namespace=namespace, service_account=service_account, template=template, as_steps=self.as_steps
        )


STEPS = Bundled("volcano-step-job", steps_pipeline, as_steps=True)
DAG = Bundled("volcano-dag-job", dag_pipeline, as_steps=False)
