"""The runtime of a job's function: what the function imports inside itself (``from hera_volcano import runtime``).

Functions travel alone and hera-volcano is not installed in a job's image: in a pod, the launcher makes this module
from the pods' ConfigMap, which holds the modules below as they are (:func:`hera_volcano.pods.program.runtime_source`);
anywhere else (tests, a local run) this file re-exports them. One implementation, the same in both places: this
file only lists names.
"""

from __future__ import annotations

from hera_volcano.pods.checkpoints import Checkpoint as Checkpoint
from hera_volcano.pods.checkpoints import CheckpointError as CheckpointError
from hera_volcano.pods.checkpoints import checkpoint_dir as checkpoint_dir
from hera_volcano.pods.checkpoints import checkpoints as checkpoints
from hera_volcano.pods.checkpoints import latest_checkpoint as latest_checkpoint
from hera_volcano.pods.checkpoints import save_checkpoint as save_checkpoint

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "checkpoint_dir",
    "checkpoints",
    "latest_checkpoint",
    "save_checkpoint",
]
