"""Write every document the conformance run validates: bundled CLI outputs in both kinds, and generated variants.

Usage: python conformance/variants.py OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hera.workflows import DAG, Container, Workflow

from hera_volcano import (
    ArgoRetry,
    Pipeline,
    PipelineJob,
    PodSettings,
    PodVolume,
    Toleration,
    VolcanoRetry,
    batch_job,
    job_template,
    mpi_job,
    pytorch_job,
    tensorflow_job,
    to_yaml,
)
from hera_volcano.builders.program import Program
from hera_volcano.examples import pytorch_hello
from hera_volcano.examples.mpi_hello import Options, render

CLI = {
    "mpi-hello": ["hera_volcano.mpi_hello"],
    "pytorch-hello": ["hera_volcano.pytorch_hello"],
    "steps": ["hera_volcano.steps"],
    "dag": ["hera_volcano.dag"],
}


def cli_outputs(out: Path) -> None:
    """What users pipe to `argo submit -` and `kubectl apply -f -`, exactly as the CLI prints it."""
    for name, module in CLI.items():
        for kind, extra in (("workflow", []), ("template", ["--template"])):
            text = subprocess.run([sys.executable, "-m", *module, *extra], check=True, capture_output=True, text=True)
            (out / f"cli-{name}-{kind}.yaml").write_text(text.stdout)
    rbac = subprocess.run([sys.executable, "-m", "hera_volcano.rbac"], check=True, capture_output=True, text=True)
    (out / "cli-rbac.yaml").write_text(rbac.stdout)


def mpi_variants(out: Path) -> None:
    for workers in range(1, 9):
        for template in (False, True):
            kind = "template" if template else "workflow"
            opts = Options(workers=workers, template=template, mpi_plugin=workers % 2 == 0)
            (out / f"mpi-{workers}w-{kind}.yaml").write_text(render(opts))
    extra = {
        "gpus": Options(gpus_per_worker=2, rdma_per_worker=1),
        "slots": Options(workers=3, slots_per_worker=4),
        "named": Options(job_name="fixed-mpi-job", namespace="ml", service_account="runner"),
        "plugin-gpus": Options(mpi_plugin=True, gpus_per_worker=8, workers=4, template=True),
    }
    for name, opts in extra.items():
        (out / f"mpi-{name}.yaml").write_text(render(opts))


def pipeline_variants(out: Path) -> None:
    jobs = [
        PipelineJob("prep", batch_job(image="python:3.12", program=Program.command(["python", "-c", 'print("a: b")']))),
        PipelineJob(
            "train",
            batch_job(image="example.com/t:2", program=Program.command(["train", "--lr", "1e-5"]), replicas=4),
            after=["prep"],
        ),
        PipelineJob(
            "eval",
            batch_job(image="python:3.12", program=Program.command(["eval"]), pod=PodSettings(cpu="500m")),
            after=["train"],
            follow_logs=True,
        ),
        PipelineJob(
            "report",
            batch_job(image="python:3.12", program=Program.command(["report"]), retry=ArgoRetry(limit=2)),
            after=["prep"],
        ),
        PipelineJob(
            "publish",
            batch_job(image="alpine:3", program=Program.command(["true"]), retry=VolcanoRetry(2)),
            after=["eval", "report"],
        ),
    ]
    pipeline = Pipeline(jobs)
    for as_steps in (False, True):
        for template in (False, True):
            wf = pipeline.workflow("pipeline", as_steps=as_steps, template=template)
            name = f"pipeline-{'steps' if as_steps else 'dag'}-{'template' if template else 'workflow'}.yaml"
            (out / name).write_text(to_yaml(wf))


def composed(out: Path) -> None:
    """A user's own DAG mixing containers, a pipeline and an MPI job."""
    pipeline = Pipeline([PipelineJob("train", batch_job(image="python:3.12", program=Program.command(["train"])))])
    with Workflow(generate_name="composed-", namespace="argo", entrypoint="main", service_account_name="argo") as w:
        prep = Container(name="prep", image="alpine:3", command=["echo", "prep"])
        mpi = job_template(
            mpi_job(
                image="volcanosh/example-mpi:0.0.3",
                program=Program.command(["mpi_hello_world"]),
                service_account="argo",
            ),
            name="mpi",
        )
        with DAG(name="main"):
            first = prep(name="prep")
            tasks = pipeline.add_tasks()
            first >> tasks["train"] >> mpi(name="mpi")
    (out / "composed-dag.yaml").write_text(to_yaml(w))


#: Every pod setting at once, so the validators decode each field of a pod template the builders write.
SETTINGS = PodSettings(
    cpu="250m",
    memory="512Mi",
    cpu_limit="1",
    memory_limit="1Gi",
    extended_resources={"rdma/ib": 1},
    env={"LOG_LEVEL": "debug", "TOKEN": {"secretKeyRef": {"name": "token", "key": "value"}}},
    volumes=[
        PodVolume.empty_dir("scratch", "/scratch", size_limit="1Gi"),
        PodVolume.config_map("settings", "/etc/settings"),
        PodVolume.secret("keys", "/etc/keys"),
        PodVolume.claim("data", "/data", claim="datasets", read_only=True),
    ],
    image_pull_secrets=["regcred"],
    node_selector={"kubernetes.io/os": "linux"},
    tolerations=[
        Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
        Toleration(key="spot", value="true", effect="NoExecute", seconds=60),
    ],
    affinity={
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {}}},
                }
            ]
        }
    },
    labels={"team": "ml"},
    annotations={"example.com/owner": "ml-platform"},
    patch={"spec": {"terminationGracePeriodSeconds": 30}},
)


def framework_variants(out: Path) -> None:
    """PyTorch and TensorFlow jobs, every pod setting on each builder, and a framework job as a pipeline shape."""
    image = pytorch_hello.PYTORCH_IMAGE
    jobs = {
        "pytorch-4w": pytorch_job(image=image, program=Program.command(["python3", "train.py"]), workers=4, port=29500),
        "pytorch-settings": pytorch_job(
            image=image, program=Program.command(["python3", "train.py"]), pod=SETTINGS, worker_pod=PodSettings(gpus=1)
        ),
        "tensorflow-chief": tensorflow_job(image=image, program=Program.command(["python3", "train.py"])),
        "tensorflow-ps": tensorflow_job(
            image=image, program=Program.command(["python3", "train.py"]), ps=2, workers=3, chief=False, pod=SETTINGS
        ),
        "mpi-settings": mpi_job(
            image="volcanosh/example-mpi:0.0.3",
            program=Program.command(["mpi_hello_world"]),
            pod=SETTINGS,
            worker_pod=PodSettings(gpus=2),
            service_account="argo",
        ),
    }
    for name, job in jobs.items():
        with Workflow(generate_name=f"{name}-", namespace="argo", entrypoint="main", service_account_name="argo") as w:
            job_template(job, name="main")
        (out / f"{name}.yaml").write_text(to_yaml(w))
    train = pytorch_job(image=image, program=Program.command(["python3", "train.py"]))
    pipeline = Pipeline(
        [
            PipelineJob("prep", batch_job(image=image, program=Program.command(["python3", "prep.py"]), pod=SETTINGS)),
            PipelineJob("train", train, after=["prep"], follow_logs=True),
            PipelineJob("tune", train, after=["train"]),
        ]
    )
    for as_steps in (False, True):
        (out / f"framework-pipeline-{'steps' if as_steps else 'dag'}.yaml").write_text(
            to_yaml(pipeline.workflow("frameworks", as_steps=as_steps))
        )


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cli_outputs(out)
    mpi_variants(out)
    pipeline_variants(out)
    framework_variants(out)
    composed(out)


if __name__ == "__main__":
    main()
