"""The data pipeline (``python -m hera_volcano.data_pipeline | argo submit -``): prep, train, evaluate, with data
flowing between them.

- ``prep``, an ordinary step, writes a small synthetic data set (``y = 3x + 2`` and some noise) to the workspace;
- ``train`` runs :func:`train`, a Python function, under ``torchrun`` on a gang-scheduled Volcano PyTorch job
  (1 master + 2 workers, DistributedDataParallel over gloo on CPUs); rank 0 saves the model to the workspace and
  reports its final loss and the model's path, which become the task's outputs;
- ``evaluate``, an ordinary step, takes the loss and the path as inputs, loads the model and prints both.

The workspace is an existing PersistentVolumeClaim (``--claim``) mounted at ``/workspace`` in every pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hera_volcano.argo.defaults import NAMESPACE, SERVICE_ACCOUNT
from hera_volcano.examples.pytorch_hello import PYTORCH_IMAGE
from hera_volcano.kube import names
from hera_volcano.kube.images import PYTHON_IMAGE

if TYPE_CHECKING:
    from hera.workflows import Workflow

NAME: Final = "volcano-data-pipeline"
#: The claim the bundled workflow mounts (it must exist: the README says how to make one).
CLAIM: Final = "hera-volcano-workspace"
WORKSPACE: Final = "/workspace"
DATA: Final = f"{WORKSPACE}/data.jsonl"
MODEL: Final = f"{WORKSPACE}/model.pt"

#: prep: the data set, one JSON object per line (standard library only).
PREP: Final = """\
import json, os, random
random.seed(7)
with open(os.environ["DATA"], "w") as out:
    for _ in range(int(os.environ["ROWS"])):
        x = random.random()
        out.write(json.dumps({"x": x, "y": 3 * x + 2 + random.gauss(0, 0.05)}) + "\\n")
print("wrote", os.environ["ROWS"], "rows to", os.environ["DATA"])
"""

#: evaluate: the model rank 0 saved, on the data, beside the loss it reported.
EVALUATE: Final = """\
import json, os
import torch
net = torch.nn.Linear(1, 1)
net.load_state_dict(torch.load(os.environ["MODEL"]))
with open(os.environ["DATA"]) as f:
    rows = [json.loads(line) for line in f]
x = torch.tensor([[r["x"]] for r in rows])
y = torch.tensor([[r["y"]] for r in rows])
with torch.no_grad():
    mse = float(torch.nn.functional.mse_loss(net(x), y))
print("loss reported by rank 0:", os.environ["LOSS"])
print("model:", os.environ["MODEL"])
print("weight %.3f, bias %.3f, mean squared error on the data %.6f" % (net.weight.item(), net.bias.item(), mse))
"""


def train(data: str, model: str, epochs: int, lr: float) -> dict[str, Any] | None:
    """Fit ``y = w x + b`` with DistributedDataParallel on every rank's share of the data; rank 0 saves the model
    and returns the final loss (averaged over the ranks) and the model's path: the job's report."""
    import json

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo")  # torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, size = dist.get_rank(), dist.get_world_size()
    with open(data) as f:
        rows = [json.loads(line) for line in f][rank::size]
    x = torch.tensor([[r["x"]] for r in rows])
    y = torch.tensor([[r["y"]] for r in rows])
    torch.manual_seed(0)
    net = DistributedDataParallel(torch.nn.Linear(1, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=lr)
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        optimizer.step()
        if rank == 0 and epoch % 50 == 0:
            print(f"epoch {epoch}: loss {loss.item():.6f}", flush=True)
    total = loss.detach().clone()
    dist.all_reduce(total)
    report = None
    if rank == 0:
        torch.save(net.module.state_dict(), model)
        report = {"loss": round(total.item() / size, 6), "model": model}
    dist.barrier()  # the model is on the workspace before any rank ends
    dist.destroy_process_group()
    return report


@dataclass(frozen=True)
class Options:
    """What a user may change."""

    namespace: str = NAMESPACE
    service_account: str = SERVICE_ACCOUNT
    claim: str = CLAIM
    workers: int = 2
    image: str = PYTORCH_IMAGE
    rows: int = 200
    epochs: int = 300
    follower_image: str = PYTHON_IMAGE
    template: bool = False


def build(options: Options = Options()) -> Workflow:
    """The data pipeline as a Workflow (or WorkflowTemplate): pure, no I/O."""
    from hera.workflows import Container, Env, Parameter

    from hera_volcano.builders.pipeline import Pipeline
    from hera_volcano.builders.pipeline_entries import PipelineJob, PipelineStep, StepOutput
    from hera_volcano.builders.program import Program
    from hera_volcano.builders.pytorch import pytorch_job
    from hera_volcano.builders.workspace import Workspace

    names.check("namespace", options.namespace, names.dns1123_label)
    names.check("service_account", options.service_account, names.dns1123_subdomain)
    job = pytorch_job(
        generate_name="train-",
        image=options.image,
        program=Program.function(train, args={"data": DATA, "model": MODEL, "epochs": options.epochs, "lr": 0.5}),
        workers=options.workers,
    )
    prep = Container(
        name="prep",
        image=options.image,
        command=["python3", "-c", PREP],
        env=[Env(name="DATA", value=DATA), Env(name="ROWS", value=str(options.rows))],
    )
    evaluate = Container(
        name="evaluate",
        image=options.image,
        command=["python3", "-c", EVALUATE],
        inputs=[Parameter(name="loss"), Parameter(name="model")],
        env=[
            Env(name="DATA", value=DATA),
            Env(name="LOSS", value="{{inputs.parameters.loss}}"),
            Env(name="MODEL", value="{{inputs.parameters.model}}"),
        ],
    )
    pipeline = Pipeline(
        [
            PipelineStep("prep", prep),
            PipelineJob("train", job, after=["prep"], outputs=["loss", "model"], template="train", job_label="train"),
            PipelineStep(
                "evaluate", evaluate, {"loss": StepOutput("train", "loss"), "model": StepOutput("train", "model")}
            ),
        ],
        workspace=Workspace(options.claim, WORKSPACE),
        follower_image=options.follower_image,
    )
    return pipeline.workflow(
        NAME, namespace=options.namespace, service_account=options.service_account, template=options.template
    )


def render(options: Options = Options()) -> str:
    """The YAML document ``build`` describes."""
    from hera_volcano.kube.emit import to_yaml

    return to_yaml(build(options))
