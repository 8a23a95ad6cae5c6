"""Which global rank a process of a job is, by how it was launched: the one rule the launcher reports by (only rank 0
reports a function's return value) and the progress helper prints by (:mod:`hera_volcano.pods.progress`).

The launcher tells the processes it starts how they were launched, in :data:`LAUNCH_VARIABLE`, so that code running
inside them (a function, a script) finds its rank by the same rule. Standard library only: it runs in the job's image.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

#: Where each kind of launch says which rank a process is, first found wins.
RANK_VARIABLES = {
    "torchrun": ("RANK",),
    "mpi": ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"),
    "replica": ("VC_TASK_INDEX",),
}
#: The roles of a TensorFlow job in the order of their global ranks (the chief is rank 0; without one, worker 0 is).
TF_ROLES = ("chief", "worker", "ps", "evaluator")
#: The kind of launch of the processes the launcher started (``torchrun``, ``mpi``, ``replica``, ``tensorflow``).
LAUNCH_VARIABLE = "HERA_VOLCANO_LAUNCH"


class RankError(Exception):
    """The rank of this process cannot be told: one line for the log."""


def tensorflow_rank(env: Mapping[str, str]) -> int:
    """The place of this pod in TF_CONFIG (set by the tensorflow plugin of Volcano): the roles in the order of TF_ROLES,
    each by its index."""
    text = env.get("TF_CONFIG")
    if text is None:
        raise RankError("TF_CONFIG is not set")
    try:
        config = json.loads(text)
    except ValueError as e:
        raise RankError("TF_CONFIG is not JSON: " + str(e)) from None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not isinstance(task, dict) or task.get("type") not in TF_ROLES:
        raise RankError("TF_CONFIG names no task of " + ", ".join(TF_ROLES))
    before = TF_ROLES[: TF_ROLES.index(task["type"])]
    index = task.get("index")
    if not isinstance(index, int):
        raise RankError("the task in TF_CONFIG has no index")
    return sum(len(cluster.get(role) or []) for role in before) + index


def rank(kind: str, env: Mapping[str, str] = os.environ) -> int:
    """The global rank of this process, launched as ``kind``."""
    if kind == "tensorflow":
        return tensorflow_rank(env)
    if kind not in RANK_VARIABLES:
        kinds = sorted([*RANK_VARIABLES, "tensorflow"])
        raise RankError("unknown launch " + repr(kind) + ": one of " + ", ".join(kinds))
    for variable in RANK_VARIABLES[kind]:
        text = env.get(variable)
        if text is not None:
            try:
                return int(text)
            except ValueError:
                raise RankError(variable + " is not a rank: " + repr(text)) from None
    if kind == "mpi":
        try:
            from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            pass
        else:
            return int(MPI.COMM_WORLD.Get_rank())
    raise RankError("cannot tell the rank of this process: none of " + ", ".join(RANK_VARIABLES[kind]) + " is set")


def own_rank(env: Mapping[str, str] = os.environ) -> int:
    """The global rank of this process as the launcher that started it says (:data:`LAUNCH_VARIABLE`); 0 for a
    process no launcher started (it is alone: a function called on a laptop)."""
    kind = env.get(LAUNCH_VARIABLE)
    return 0 if not kind else rank(kind, env)
