"""The runtime of a job's function: what the function imports inside itself (``from hera_volcano import runtime``).

Functions travel alone and hera-volcano is not installed in a job's image: in a pod, the launcher makes this module
from the pods' ConfigMap, which holds the modules below as they are (:func:`hera_volcano.pods.program.runtime_source`);
anywhere else (tests, a local run) this file re-exports them. One implementation, the same in both places: this
file only lists names.

``checkpoint_dir()``, ``latest_checkpoint()`` and ``save_checkpoint(step)`` keep a run's checkpoints where the
job's ``checkpoints=`` setting says (:mod:`hera_volcano.pods.checkpoints`); ``progress(done, total, **metrics)``
says how far the job has got and its latest metrics, printed on global rank 0 only
(:mod:`hera_volcano.pods.progress`); ``argo get``, ``hera-volcano status`` and the task's ``job-metrics`` output
show them.
"""

from __future__ import annotations

from hera_volcano.pods.checkpoints import Checkpoint as Checkpoint
from hera_volcano.pods.checkpoints import CheckpointError as CheckpointError
from hera_volcano.pods.checkpoints import checkpoint_dir as checkpoint_dir
from hera_volcano.pods.checkpoints import checkpoints as checkpoints
from hera_volcano.pods.checkpoints import latest_checkpoint as latest_checkpoint
from hera_volcano.pods.checkpoints import save_checkpoint as save_checkpoint
from hera_volcano.pods.progress import ProgressError as ProgressError
from hera_volcano.pods.progress import progress as progress

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "ProgressError",
    "checkpoint_dir",
    "checkpoints",
    "latest_checkpoint",
    "progress",
    "save_checkpoint",
]
