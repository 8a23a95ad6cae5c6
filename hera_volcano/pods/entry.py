"""How the pods' program starts (``python3 -c BOOTSTRAP [wait-for-workers|pick-best]``, see
:mod:`hera_volcano.pods.program`): the log follower (:mod:`hera_volcano.pods.run`), with ``wait-for-workers`` the MPI
master's wait for its workers (:mod:`hera_volcano.pods.workers`), with ``pick-best`` a sweep's pick
(:mod:`hera_volcano.pods.sweep`), each as the pod's service account. SIGTERM (or SIGINT) ends any at once, 143.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping, Sequence

from hera_volcano.pods.kubeapi import SERVICE_ACCOUNT_DIR, Api, ApiError
from hera_volcano.pods.run import FollowLogs, Settings
from hera_volcano.pods.sweep import PICK_COMMAND, PickSettings, pick
from hera_volcano.pods.workers import WAIT_COMMAND, WaitSettings, wait_for_workers

#: The exit status after SIGTERM, as for a process it killed.
TERMINATED = 143


class Terminated(Exception):
    """SIGTERM (or SIGINT) arrived: stop at once."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def start(argv: Sequence[str], env: Mapping[str, str] = os.environ) -> int:
    """Run what ``argv`` (after the program's own name) asks. A follower that cannot reach the API server exits 0
    unless it has values to give (a log follower must not fail a workflow); the wait exits 1, so the kubelet tries
    again."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    if list(argv[1:]) == [PICK_COMMAND]:
        return _pick(env)
    waiting = list(argv[1:]) == [WAIT_COMMAND]
    try:
        settings = WaitSettings.from_env(env) if waiting else Settings.from_env(env)
        api = Api.in_cluster(env, env.get("SA_DIR") or SERVICE_ACCOUNT_DIR)
        if isinstance(settings, WaitSettings):
            return wait_for_workers(api, settings)
        return FollowLogs(api, settings, publish=True).run()
    except Terminated:
        return TERMINATED
    except (KeyError, ValueError) as e:  # a template that sets the environment wrongly
        print(f"hera-volcano {WAIT_COMMAND if waiting else 'follower'}: bad environment: {e}", file=sys.stderr)
        return 1
    except ApiError as e:
        print(f"hera-volcano {WAIT_COMMAND if waiting else 'follower'}: {e}", file=sys.stderr)
        return 1 if waiting or (env.get(Settings.OUTPUTS) or "").split() else 0


def _pick(env: Mapping[str, str]) -> int:
    """A sweep's pick: 1 when its settings or the service account cannot be read (the pick fails the sweep, saying
    why), else what :func:`pick` decided."""
    try:
        settings = PickSettings.from_env(env)
        api = Api.in_cluster(env, env.get("SA_DIR") or SERVICE_ACCOUNT_DIR)
        return pick(api, settings)
    except Terminated:
        return TERMINATED
    except (KeyError, ValueError, ApiError) as e:
        print(f"hera-volcano {PICK_COMMAND}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(start(sys.argv))
