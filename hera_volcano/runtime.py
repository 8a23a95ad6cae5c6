"""What a job's own function imports inside itself, in the pod: the helpers of hera-volcano's in-pod code
(``hera_volcano/pods``, standard library only), re-exported under one public name.

``progress(done, total, **metrics)`` says how far the job has got and its latest metrics, printed on global rank 0
only (:mod:`hera_volcano.pods.progress`); ``argo get``, ``hera-volcano status`` and the task's ``job-metrics`` output
show them.
"""

from __future__ import annotations

from hera_volcano.pods.progress import ProgressError, progress

__all__ = ["ProgressError", "progress"]
