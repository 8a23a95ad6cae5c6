"""Write every document the conformance run validates: bundled CLI outputs in both kinds, and generated variants.

Usage: python conformance/variants.py OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hera.workflows import DAG, Container, Workflow

from hera_volcano import ArgoRetry, Pipeline, VolcanoRetry, batch_job, job_template, mpi_job, to_yaml
from hera_volcano.examples.mpi_hello import Options, render

CLI = {
    "mpi-hello": ["hera_volcano.mpi_hello"],
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
        batch_job("prep", image="python:3.12", command=["python", "-c", 'print("a: b")']),
        batch_job("train", image="example.com/t:2", command=["train", "--lr", "1e-5"], replicas=4, after=["prep"]),
        batch_job("eval", image="python:3.12", command=["eval"], after=["train"], follow_logs=True, cpu="500m"),
        batch_job("report", image="python:3.12", command=["report"], after=["prep"], retry=ArgoRetry(limit=2)),
        batch_job("publish", image="alpine:3", command=["true"], after=["eval", "report"], retry=VolcanoRetry(2)),
    ]
    pipeline = Pipeline(jobs)
    for as_steps in (False, True):
        for template in (False, True):
            wf = pipeline.workflow("pipeline", as_steps=as_steps, template=template)
            name = f"pipeline-{'steps' if as_steps else 'dag'}-{'template' if template else 'workflow'}.yaml"
            (out / name).write_text(to_yaml(wf))


def composed(out: Path) -> None:
    """A user's own DAG mixing containers, a pipeline and an MPI job."""
    pipeline = Pipeline([batch_job("train", image="python:3.12", command=["train"])])
    with Workflow(generate_name="composed-", namespace="argo", entrypoint="main", service_account_name="argo") as w:
        prep = Container(name="prep", image="alpine:3", command=["echo", "prep"])
        mpi = job_template(mpi_job(image="volcanosh/example-mpi:0.0.3", command=["mpi_hello_world"]), name="mpi")
        with DAG(name="main"):
            first = prep(name="prep")
            tasks = pipeline.add_tasks()
            first >> tasks["train"] >> mpi(name="mpi")
    (out / "composed-dag.yaml").write_text(to_yaml(w))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cli_outputs(out)
    mpi_variants(out)
    pipeline_variants(out)
    composed(out)


if __name__ == "__main__":
    main()
