"""The MPI job builder: one master running ``mpiexec`` and N ssh workers, gang-scheduled as one unit."""

from __future__ import annotations

import shlex
from typing import Any

from hera_volcano.argo.labels import LEAD_TASK_ANNOTATION
from hera_volcano.builders import gang
from hera_volcano.builders.pod import PodSettings, apply_settings, check_settings
from hera_volcano.builders.program import Program, check_env, with_launcher
from hera_volcano.builders.program import check as check_program
from hera_volcano.kube import pod_scripts
from hera_volcano.kube.images import PYTHON_IMAGE, check_image
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.workers import WAIT_COMMAND
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.job import Plugin, Policy, VolcanoJob, VolcanoTask
from hera_volcano.volcano.queue import Queue
from hera_volcano.volcano.step import DEFAULT_START_LIMIT, ArgoRetry, VolcanoRetry

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


def _api_access_volume() -> dict[str, Any]:
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
    name: str | Placeholder | None = None,
    generate_name: str | None = None,
    queue: str | Queue | None = None,
    priority_class_name: str | None = None,
    service_account: str | None = None,
    working_dir: str = "/home",
    deadline: int | None = None,
    start_limit: int | None = DEFAULT_START_LIMIT,
    retry: ArgoRetry | VolcanoRetry | None = None,
    pod: PodSettings | None = None,
    master_pod: PodSettings | None = None,
    worker_pod: PodSettings | None = None,
    mpi_plugin: bool = False,
    ssh_port: int = 22,
    wait_image: str = PYTHON_IMAGE,
    wait_seconds: int = 600,
    master_max_retry: int = 3,
) -> VolcanoJob:
    """An MPI job: 1 master + ``workers`` worker pods, one gang of ``workers + 1`` pods on the Volcano scheduler,
    running ``workers * slots_per_worker`` ranks (on the workers).

    Workers run ``sshd -D`` and are Ready once it listens. The master waits in an init container (``python3`` in
    ``wait_image``, the pods' program that ``hera-volcano rbac`` installs, as ``service_account``, which needs
    ``list``/``watch`` on pods) at most ``wait_seconds`` until all workers are Ready, then runs
    ``mpiexec -np workers*slots_per_worker PROGRAM``. When the master completes, the job completes (the workers'
    sshd would otherwise keep it Running); when its container fails ``master_max_retry`` times, the job terminates.
    ``mpi_plugin`` uses Volcano's mpi plugin (≥ 1.6) instead of listing ssh and svc. Without ``name`` the job gets
    ``generate_name`` (default ``mpi-job-``), so creating it twice never collides.

    ``pod`` settings apply to every pod, ``master_pod`` and ``worker_pod`` on top of them to one role. The ranks
    run on the workers (their resources and GPUs belong in ``worker_pod``), started by sshd with a clean
    environment: ``mpiexec`` passes the variables of ``pod.env`` and ``master_pod.env`` on to every rank (``-x``).

    A :class:`Program` function, script or module runs under ``python3`` on every rank (it may use ``mpi4py``;
    rank 0's return value is the job's report). ``deadline``, ``start_limit`` and ``retry``: see
    :class:`VolcanoJob`.
    """
    generate_name = gang.job_names(name, generate_name, "mpi-job-")
    program = check_program(program)
    if not isinstance(mpi_plugin, bool):
        raise ValidationError("mpi_plugin", "must be true or false")
    checks.integer("workers", workers, minimum=1, maximum=gang.MAX_WORKERS)
    checks.integer("slots_per_worker", slots_per_worker, minimum=1, maximum=MAX_SLOTS)
    checks.integer("wait_seconds", wait_seconds, minimum=1)
    checks.integer("master_max_retry", master_max_retry)
    checks.integer("ssh_port", ssh_port, minimum=1, maximum=65535)
    check_image(image, "image")
    check_image(wait_image, "wait_image")
    launch = program.launch
    ranks_run = gang.script_arguments(program.argv or ()) if launch is None else launch.command("mpi")
    gang.service_account(service_account)
    gang.working_dir(working_dir)
    pod = check_settings("pod", pod)
    master_pod = check_settings("master_pod", master_pod)
    worker_pod = check_settings("worker_pod", worker_pod)
    launch_env = [] if launch is None else launch.env()
    if launch is not None:
        check_env({"pod": pod, "master_pod": master_pod, "worker_pod": worker_pod})

    ranks = workers * slots_per_worker
    rsh = f" --mca plm_rsh_args '-p {ssh_port}'" if ssh_port != 22 else ""
    forwarded = dict.fromkeys(
        [*(e["name"] for e in launch_env), *(pod.env if pod else ()), *(master_pod.env if master_pod else ())]
    )
    exports = "".join(f" -x {shlex.quote(variable)}" for variable in forwarded)
    master_script = "\n".join(
        [
            "set -e",
            _host_list(mpi_plugin, WORKER, slots_per_worker),
            pod_scripts.read(_SCRIPTS, "resolve_workers.sh").rstrip("\n"),
            "mkdir -p /var/run/sshd",
            f"/usr/sbin/sshd -p {ssh_port}",
            f'echo "Running {ranks} MPI ranks on $HOSTS"',
            # The ranks' command arrives as the script's own arguments ("$@"), never as shell text: a value the
            # kubelet expands into it ($(VAR)) cannot become code (issue 34).
            f'exec mpiexec --allow-run-as-root{rsh}{exports} --host "$HOSTS" -np {ranks} "$@"',
            "",
        ]
    )
    worker_script = f"mkdir -p /var/run/sshd\nexec /usr/sbin/sshd -D -p {ssh_port}\n"
    port = [{"containerPort": ssh_port, "name": "mpijob-port"}]

    def container(task: str, script: str, *argv: str, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": task,
            "image": image,
            "workingDir": working_dir,
            "command": ["/bin/sh", "-c", script, "sh", *argv],
            "ports": port,
        }
        out.update(extra)
        return out

    wait = {
        "name": "wait-for-workers",
        "image": wait_image,
        "command": [
            *("/bin/sh", "-c", pod_scripts.read(_SCRIPTS, "pid1.sh"), "sh"),
            *("python3", "-c", pods_program.bootstrap(), WAIT_COMMAND),
        ],
        "env": [
            {"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['volcano.sh/job-name']"}}},
            {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "WORKER_TASK", "value": WORKER},
            {"name": "WORKERS", "value": str(workers)},
            {"name": "WAIT_SECONDS", "value": str(wait_seconds)},
        ],
    }
    # Only the init container gets an API token: mpiexec and the user's program run without one.
    wait["volumeMounts"] = [
        {"name": API_ACCESS, "mountPath": TOKEN_DIR, "readOnly": True},
        pods_program.mount(),
    ]
    master_spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "initContainers": [wait],
        "containers": [container(MASTER, master_script, *ranks_run, **({"env": launch_env} if launch_env else {}))],
        "volumes": [_api_access_volume(), pods_program.volume()],
        "restartPolicy": "OnFailure",
    }
    if service_account is not None:
        master_spec = {"serviceAccountName": service_account, **master_spec}
    probe = {"tcpSocket": {"port": ssh_port}, "initialDelaySeconds": 2, "periodSeconds": 5, "failureThreshold": 3}
    worker = container(WORKER, worker_script, readinessProbe=probe)
    worker_spec = {
        "automountServiceAccountToken": False,  # the ranks run here: no API credentials for user code
        "containers": [worker],
        "restartPolicy": "OnFailure",
    }
    if launch is not None:
        with_launcher(worker_spec, worker)  # mpiexec starts the ranks on the workers
    plugins = (
        [Plugin.mpi(master=MASTER, worker=WORKER, port=ssh_port if ssh_port != 22 else None)]
        if mpi_plugin
        else [Plugin.ssh(), Plugin.svc()]
    )
    return VolcanoJob(
        name=name,
        generate_name=generate_name,
        min_available=workers + 1,
        deadline=deadline,
        start_limit=start_limit,
        retry=retry,
        policies=gang.terminate_on_pod_failure(),
        scheduler_name="volcano",
        queue=queue,
        priority_class_name=priority_class_name,
        annotations={LEAD_TASK_ANNOTATION: MASTER},
        plugins=plugins,
        tasks=[
            VolcanoTask(
                name=MASTER,
                replicas=1,
                max_retry=master_max_retry,
                policies=[
                    Policy(event="TaskCompleted", action="CompleteJob"),
                    Policy(event="TaskFailed", action="TerminateJob"),
                ],
                template=apply_settings(
                    {"metadata": {"annotations": pods_program.pod_annotations(pods_program.WAIT)}, "spec": master_spec},
                    MASTER,
                    pod,
                    master_pod,
                ),
            ),
            VolcanoTask(
                name=WORKER,
                replicas=workers,
                template=apply_settings({"spec": worker_spec}, WORKER, pod, worker_pod),
            ),
        ],
    )
