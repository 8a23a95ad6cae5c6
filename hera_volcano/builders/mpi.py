"""The MPI job builder: one master running ``mpiexec`` and N ssh workers, gang-scheduled as one unit."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hera_volcano.builders import gang
from hera_volcano.builders.checkpoints import Checkpoints
from hera_volcano.builders.pod import PodSettings, apply_settings, check_settings
from hera_volcano.builders.program import Launch, Program, check_command_env, check_env, with_launcher
from hera_volcano.builders.program import check as check_program
from hera_volcano.builders.settings import JobSettings, checked, job
from hera_volcano.kube import pod_scripts
from hera_volcano.kube.images import PYTHON_IMAGE, check_image
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.checkpoints import CheckpointSettings
from hera_volcano.pods.workers import WAIT_COMMAND, WaitSettings
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask

if TYPE_CHECKING:
    from typing_extensions import Unpack

MASTER = "mpimaster"
WORKER = "mpiworker"
#: The RDMA devices of InfiniBand device plugins, as an extended resource (``PodSettings(extended_resources=)``).
RDMA = "rdma/ib"
MAX_SLOTS = 4096  # ranks per worker: more cores than any node has

# The master waits in an init container until every worker is Ready (hera_volcano/pods/workers.py, from the pods'
# program's ConfigMap), then, in its own container, until their names resolve (scripts/resolve_workers.sh).
_SCRIPTS = "hera_volcano.builders"

API_ACCESS = "kube-api-access"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def _api_access_volume() -> dict[str, object]:
    """What Kubernetes mounts for a service account (token, cluster CA, namespace), as a volume we mount into the
    one container that needs it, instead of into every container of the pod."""
    return {
        "name": API_ACCESS,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
            ]
        },
    }


def _host_list(mpi_plugin: bool, worker_task: str, slots: int) -> str:
    """Shell that sets HOSTS to ``host:slots,...`` from the mpi plugin's MPI_HOST or the svc plugin's host file."""
    source = 'printf "%s" "$MPI_HOST"' if mpi_plugin else f"cat /etc/volcano/{worker_task.replace('-', '_')}.host"
    return f"HOSTS=$({source} | tr ',' '\\n' | grep . | sed 's/$/:{slots}/' | paste -sd, -)"


def mpi_job(
    *,
    image: str,
    program: Program,
    workers: int = 2,
    slots_per_worker: int = 1,
    master_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    mpi_plugin: bool = False,
    port: int = 22,
    follower_image: str = PYTHON_IMAGE,
    wait_seconds: int = 600,
    master_max_retry: int = 3,
    **settings: Unpack[JobSettings],
) -> VolcanoJob:
    """An MPI job: 1 master + ``workers`` worker pods, one gang of ``workers + 1`` pods on the Volcano scheduler,
    running ``workers * slots_per_worker`` ranks (on the workers).

    Workers run ``sshd -D`` and are Ready once it listens. The master waits in an init container (the pods' program
    that ``hera-volcano rbac`` installs, as ``service_account``, which needs ``list``/``watch`` on pods) until all
    workers are Ready, then runs ``mpiexec -np workers*slots_per_worker PROGRAM``. When the master completes, the
    job completes (the workers' sshd would otherwise keep it Running). The ranks are started by sshd with a clean
    environment: ``mpiexec`` passes the variables of ``pod.env`` and ``master_pod.env`` on to every rank (``-x``).

    :param image: the image of the master and the workers (with ``mpiexec`` and ``sshd``).
    :param program: what every rank runs: a command (by ``mpiexec``), or a :class:`Program` function, script or
        module under ``python3`` (it may use ``mpi4py``; rank 0's return value is the job's report).
    :param workers: worker pods, where the ranks run.
    :param slots_per_worker: ranks on each worker.
    :param master_pod: :class:`PodSettings` for the master, on top of ``pod``.
    :param worker_pod: :class:`PodSettings` for the workers, on top of ``pod`` (their resources and GPUs).
    :param mpi_plugin: use Volcano's mpi plugin (≥ 1.6) instead of listing ssh and svc.
    :param port: the workers' sshd port (the one the plugin wires).
    :param follower_image: the image (with ``python3``) the master's wait for its workers runs in.
    :param wait_seconds: how long the master waits at most for its workers to be Ready.
    :param master_max_retry: how many times the master's container may fail before the job terminates.
    :param settings: the settings every builder shares (``name``, ``queue``, ``service_account``, ``pod``,
        ``deadline``, ``start_limit``, ``retry``...): :class:`JobSettings`; ``working_dir`` is ``/home`` by default,
        ``generate_name`` ``mpi-job-``.
    """
    shared = checked(settings, "mpi_job", working_dir="/home")
    program = check_program(program)
    _check_shape(workers, slots_per_worker, mpi_plugin, port, wait_seconds, master_max_retry)
    check_image(image, "image")
    check_image(follower_image, "follower_image")
    launch = program.launch
    ranks_run = gang.script_arguments(program.argv or ()) if launch is None else [*launch.command("mpi")]
    roles = {"pod": shared["pod"], MASTER: check_settings("master_pod", master_pod)}
    roles[WORKER] = check_settings("worker_pod", worker_pod)
    if launch is not None:
        check_env({"pod": roles["pod"], "master_pod": roles[MASTER], "worker_pod": roles[WORKER]})
    check_command_env(program, {"pod": roles["pod"], "master_pod": roles[MASTER]})  # the master's command
    pods = _Pods(image, shared["working_dir"], port)
    forwarded = _forwarded(launch, roles["pod"], roles[MASTER], shared["checkpoints"])
    master = pods.master(
        _master_script(mpi_plugin, workers * slots_per_worker, slots_per_worker, port, forwarded),
        ranks_run,
        launch,
        _wait_container(follower_image, workers, wait_seconds),
        shared["service_account"],
    )
    return job(
        shared,
        lead=MASTER,
        min_available=workers + 1,
        policies=gang.terminate_on_pod_failure(),
        plugins=_plugins(mpi_plugin, port),
        tasks=_tasks(master, pods.worker(launch), workers, master_max_retry, roles),
    )


def _tasks(
    master: dict[str, object],
    worker: dict[str, object],
    workers: int,
    master_max_retry: int,
    roles: Mapping[str, PodSettings | None],
) -> list[VolcanoTask]:
    """The master (it completes the job, or after ``master_max_retry`` failures ends it) and the workers, with the
    job's ``pod`` settings and each role's on top."""
    master_task = VolcanoTask(
        name=MASTER,
        replicas=1,
        max_retry=master_max_retry,
        policies=[
            Policy(event="TaskCompleted", action="CompleteJob"),
            Policy(event="TaskFailed", action="TerminateJob"),
        ],
        template=apply_settings(
            {"metadata": {"annotations": pods_program.pod_annotations(pods_program.WAIT)}, "spec": master},
            MASTER,
            roles["pod"],
            roles[MASTER],
        ),
    )
    template = apply_settings({"spec": worker}, WORKER, roles["pod"], roles[WORKER])
    return [master_task, VolcanoTask(name=WORKER, replicas=workers, template=template)]


def _check_shape(
    workers: int, slots_per_worker: int, mpi_plugin: bool, port: int, wait_seconds: int, master_max_retry: int
) -> None:
    """The MPI job's own parameters (the shared settings are :func:`checked`)."""
    if not isinstance(mpi_plugin, bool):
        raise ValidationError("mpi_plugin", "must be true or false")
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("slots_per_worker", slots_per_worker, minimum=1, maximum=MAX_SLOTS)
    checks.integer("wait_seconds", wait_seconds, minimum=1)
    checks.integer("master_max_retry", master_max_retry)
    checks.integer("port", port, minimum=1, maximum=65535)


def _forwarded(
    launch: Launch | None, pod: PodSettings | None, master_pod: PodSettings | None, checkpoints: Checkpoints | None
) -> list[str]:
    """The variables ``mpiexec`` passes on to every rank (sshd starts them with a clean environment): the
    launcher's, those of ``pod.env`` and ``master_pod.env``, and the checkpoints' directory."""
    launch_env = [] if launch is None else launch.env()
    names = [*(e["name"] for e in launch_env), *(pod.env if pod else ()), *(master_pod.env if master_pod else ())]
    names += CheckpointSettings.NAMES if checkpoints is not None else ()
    return list(dict.fromkeys(names))


def _master_script(mpi_plugin: bool, ranks: int, slots: int, port: int, forwarded: Sequence[str]) -> str:
    """The master's shell: the workers' host list, their names resolved, its own sshd, then ``mpiexec``."""
    rsh = f" --mca plm_rsh_args '-p {port}'" if port != 22 else ""
    exports = "".join(f" -x {shlex.quote(variable)}" for variable in forwarded)
    return "\n".join(
        [
            "set -e",
            _host_list(mpi_plugin, WORKER, slots),
            pod_scripts.read(_SCRIPTS, "resolve_workers.sh").rstrip("\n"),
            "mkdir -p /var/run/sshd",
            f"/usr/sbin/sshd -p {port}",
            f'echo "Running {ranks} MPI ranks on $HOSTS"',
            # The ranks' command arrives as the script's own arguments ("$@"), never as shell text: a value the
            # kubelet expands into it ($(VAR)) cannot become code (issue 34).
            f'exec mpiexec --allow-run-as-root{rsh}{exports} --host "$HOSTS" -np {ranks} "$@"',
            "",
        ]
    )


def _wait_container(follower_image: str, workers: int, wait_seconds: int) -> dict[str, object]:
    """The master's init container: the pods' program waits until every worker is Ready."""
    wait: dict[str, object] = {
        "name": "wait-for-workers",
        "image": follower_image,
        "command": [
            *("/bin/sh", "-c", pod_scripts.read(_SCRIPTS, "pid1.sh"), "sh"),
            *("python3", "-c", pods_program.bootstrap(), WAIT_COMMAND),
        ],
        # Its namespace is the pod's, from the mounted service account (TOKEN_DIR): no variable needed.
        "env": WaitSettings(job=None, task=WORKER, count=workers, seconds=wait_seconds).to_env(),
    }
    # Only the init container gets an API token: mpiexec and the user's program run without one.
    wait["volumeMounts"] = [
        {"name": API_ACCESS, "mountPath": TOKEN_DIR, "readOnly": True},
        pods_program.mount(),
    ]
    return wait


@dataclass(frozen=True)
class _Pods:
    """The master's and the workers' pod specs: one image, working folder and ssh port."""

    image: str
    working_dir: str | None
    port: int

    def container(
        self, task: str, script: str, argv: Sequence[str | Placeholder], **extra: object
    ) -> dict[str, object]:
        out: dict[str, object] = {"name": task, "image": self.image}
        if self.working_dir is not None:
            out["workingDir"] = self.working_dir
        out["command"] = ["/bin/sh", "-c", script, "sh", *argv]
        out["ports"] = [{"containerPort": self.port, "name": "mpijob-port"}]
        return {**out, **extra}

    def master(
        self,
        script: str,
        ranks_run: Sequence[str | Placeholder],
        launch: Launch | None,
        wait: Mapping[str, object],
        service_account: str | None,
    ) -> dict[str, object]:
        """The master: ``mpiexec`` after its init container ``wait``, the only container with an API token."""
        launch_env = [] if launch is None else launch.env()
        spec: dict[str, object] = {} if service_account is None else {"serviceAccountName": service_account}
        spec["automountServiceAccountToken"] = False
        spec["initContainers"] = [dict(wait)]
        spec["containers"] = [self.container(MASTER, script, ranks_run, **({"env": launch_env} if launch_env else {}))]
        spec["volumes"] = [_api_access_volume(), pods_program.volume()]
        spec["restartPolicy"] = "OnFailure"
        return spec

    def worker(self, launch: Launch | None) -> dict[str, object]:
        """A worker: ``sshd -D``, Ready once it listens; the ranks run here, without API credentials."""
        probe = {
            "tcpSocket": {"port": self.port},
            "initialDelaySeconds": 2,
            "periodSeconds": 5,
            "failureThreshold": 3,
        }
        script = f"mkdir -p /var/run/sshd\nexec /usr/sbin/sshd -D -p {self.port}\n"
        worker = self.container(WORKER, script, (), readinessProbe=probe)
        spec: dict[str, object] = {
            "automountServiceAccountToken": False,
            "containers": [worker],
            "restartPolicy": "OnFailure",
        }
        if launch is not None:
            with_launcher(spec, worker)  # mpiexec starts the ranks on the workers
        return spec


def _plugins(mpi_plugin: bool, port: int) -> list[Plugin]:
    """Volcano's mpi plugin (≥ 1.6), or ssh and svc listed."""
    if mpi_plugin:
        return [Plugin.mpi(master=MASTER, worker=WORKER, port=port if port != 22 else None)]
    return [Plugin.ssh(), Plugin.svc()]
