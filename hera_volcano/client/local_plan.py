"""What a local run of a job starts (:func:`hera_volcano.run_local`), decided without starting anything.

The job is read as the cluster would run it: its lead container's command and environment as the builders wrote
them (the launcher of :mod:`hera_volcano.pods.launcher` with its :class:`~hera_volcano.pods.launcher.LaunchSettings`,
or the job's own command), each value as the process would get it (a run-time value from ``arguments``, the
kubelet's ``$(VAR)`` and ``$$``). Each process then gets what the cluster gives its rank instead of Volcano's plugins
and ``torchrun``, on this machine: PyTorch's ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` (the loopback
address) and a free ``MASTER_PORT``; a batch replica's ``VC_TASK_INDEX``; TensorFlow's ``TF_CONFIG``; MPI ranks are
``mpiexec``'s to number (:func:`mpiexec_command`). The arguments are checked as a call of the job's template is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from hera_volcano.argo.parameters import check_arguments
from hera_volcano.client.submission import parameter_texts
from hera_volcano.kube import values as kube_values
from hera_volcano.kube.expansion import expand
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.labels import LEAD_TASK_ANNOTATION
from hera_volcano.pods.launcher import LaunchSettings
from hera_volcano.pods.ranks import TF_ROLES
from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.shared.findings import as_list, as_map
from hera_volcano.shared.placeholders import WORKFLOW_SAMPLES, Placeholder, expressions
from hera_volcano.volcano.job import VolcanoJob, check

#: How each process finds its rank: the launcher's kinds (a command is run the same way).
Kind = Literal["torchrun", "mpi", "replica", "tensorflow"]
#: Where every local rank finds the others.
LOOPBACK: Final = "127.0.0.1"
#: More processes than a machine runs a job on.
MAX_PROCESSES: Final = 1024
#: Volcano's env plugin: a replica's index, under both of its names.
TASK_INDEX: Final = ("VC_TASK_INDEX", "VK_TASK_INDEX")
#: The interpreter a command names that a local run replaces with its own ``python``.
PYTHONS: Final = frozenset({"python", "python3"})
_INTEGER: Final = re.compile(r"[-+]?[0-9]+")
_MPIEXEC_RANKS: Final = re.compile(r" -np ([0-9]+) ")


@dataclass(frozen=True)
class Rank:
    """One process: its rank (global: what its output lines are prefixed with), its command and the variables it
    gets on top of the local environment."""

    rank: int
    argv: tuple[str, ...]
    env: Mapping[str, str]


@dataclass(frozen=True)
class LocalPlan:
    """The processes of a local run. With ``kind`` ``mpi`` one ``mpiexec`` starts them all (each rank's ``argv`` and
    ``env`` are alike: it numbers them); otherwise each is started on its own. ``launcher``: the processes run the
    pods' launcher, which must be given its file (``pods.program.LAUNCHER_PATH``). ``notes``: what the cluster
    would give that a local run does not."""

    kind: Kind
    ranks: tuple[Rank, ...]
    launcher: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Task:
    name: str
    replicas: int
    container: Mapping[str, Any]


@dataclass
class _Uses:
    """The run-time values a job reads: each variable's kinds (text, integer, JSON), and the placeholders reading
    it, by expression."""

    kinds: dict[str, set[str]] = field(default_factory=dict)
    expressions: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add(self, variable: str, kind: str, expression: str | None = None) -> None:
        self.kinds.setdefault(variable, set()).add(kind)
        if expression is not None:
            self.expressions[expression] = (variable, kind)


def plan(
    job: VolcanoJob,
    arguments: Mapping[str, object] | None,
    *,
    python: str,
    free_port: Callable[[], int],
    processes: int | None = None,
) -> LocalPlan:
    """The processes that run ``job`` here, given the values of its inputs (``arguments``, as a call of its template
    gives them: a misspelt, missing or mistyped one is a :class:`ValidationError`). ``processes`` overrides the
    job's size (ranks; a PyTorch command's or a batch job's pods; TensorFlow: all its roles, workers making up the
    rest); ``python`` runs the launcher; ``free_port`` gives a port nothing listens on."""
    if not isinstance(job, VolcanoJob):
        raise ValidationError(
            "job", f"must be a VolcanoJob (what every builder returns) or a sweep (hv.sweep), not {type(job).__name__}"
        )
    if processes is not None:
        checks.integer("processes", processes, minimum=1, maximum=MAX_PROCESSES)
    data = job.to_dict()  # the job itself by Volcano's rules, with its own samples; then with the values given
    given = _arguments(data, arguments)
    spec = as_map(data.get("spec"))
    tasks = {t.name: t for t in _tasks(spec, given)}
    plugins = {str(k): _flags(v) for k, v in as_map(spec.get("plugins")).items()}
    if "pytorch" in plugins:
        return _pytorch(tasks, plugins["pytorch"], given, python, free_port, processes)
    if "tensorflow" in plugins:
        return _tensorflow(tasks, plugins["tensorflow"], given, python, free_port, processes)
    lead = tasks.get(str(as_map(as_map(data.get("metadata")).get("annotations")).get(LEAD_TASK_ANNOTATION)))
    if lead is not None and _mpi_script(lead.container) is not None:
        return _mpi(lead, given, python, processes)
    if len(tasks) == 1 and lead is not None:
        return _batch(lead, given, python, processes)
    raise ValidationError(
        "job",
        "is not a job of mpi_job, pytorch_job, tensorflow_job or batch_job: a local run cannot tell how its pods start",
    )


def mpiexec_command(mpiexec: str, plan: LocalPlan, outputs: str, *, root: bool) -> list[str]:
    """``mpiexec`` starting the plan's ranks on this machine (more ranks than cores allowed; as root, allowed too),
    each rank's output in ``outputs/RANK.out`` and ``.err`` and its process id in ``outputs/RANK.pid`` (a rank is
    its own process group: it outlives a killed ``mpiexec``)."""
    first = plan.ranks[0]
    script = 'out="$1/$OMPI_COMM_WORLD_RANK"; shift; echo "$$" > "$out.pid"; exec "$@" > "$out.out" 2> "$out.err"'
    return [
        mpiexec,
        *("-n", str(len(plan.ranks)), "--oversubscribe"),
        *(["--allow-run-as-root"] if root else []),
        *("/bin/sh", "-c", script, "sh", outputs),
        *first.argv,
    ]


# ---------------------------------------------------------------------------------------------- the arguments


def _arguments(data: Mapping[str, object], arguments: Mapping[str, object] | None) -> dict[str, str]:
    """Each run-time variable the job reads (``inputs.parameters.X``, ``workflow.parameters.X``) with its value's
    text, after the checks of a call: every argument names an input, every input is given, as the kind it is read
    as."""
    texts = parameter_texts({} if arguments is None else arguments, "arguments")
    uses = _Uses()
    _walk(data, uses)
    names: dict[str, str] = {}
    for variable in uses.kinds:
        root, _, name = variable.rpartition(".")
        if root not in ("inputs.parameters", "workflow.parameters"):
            raise ValidationError("job", f"reads {{{{{variable}}}}}, which only a submitted workflow has")
        names.setdefault(name, variable)
    check_arguments("the job", [{"name": n} for n in names], list(texts))
    for name, variable in names.items():
        _check_kind(name, texts[name], uses.kinds[variable])
    given = {variable: texts[name] for name, variable in names.items()}
    samples = {e: _sample(given[v], kind) for e, (v, kind) in uses.expressions.items()}
    try:
        check(data, samples)  # Volcano's rules with the values given (the job passed them with its own samples)
    except ValidationError as e:
        raise ValidationError("arguments", f"with these values the job breaks Volcano's rules: {e}") from None
    return given


def _walk(node: object, uses: _Uses) -> None:
    """Record in ``uses`` every run-time value ``node`` reads, and how."""
    if isinstance(node, Placeholder):
        read = kube_values.reads(node)
        if read is not None:
            uses.add(read.variable, read.kind, node.expression)
        elif isinstance(node.sample, str):  # a value joined with text (kube.values.embedded): its tags are text
            _walk(node.sample, uses)
    elif isinstance(node, str) and "{{" in node:
        for tag in expressions(node):
            read = kube_values.parse(tag)
            if read is not None:
                uses.add(read.variable, "text")
    elif isinstance(node, Mapping):
        for item in node.values():
            _walk(item, uses)
    elif isinstance(node, list | tuple):
        for item in node:
            _walk(item, uses)
        _launcher_kinds(node, uses)


def _launcher_kinds(env: Sequence[object], uses: _Uses) -> None:
    """A launcher's run-time argument whose placeholder's sample is not a string is parsed as JSON: its value must
    be JSON (``LaunchSettings.RUNTIME_ARGS`` says which)."""
    entries = {str(e.get("name")): e.get("value") for e in env if isinstance(e, Mapping) and "name" in e}
    kinds = entries.get(LaunchSettings.RUNTIME_ARGS)
    if not isinstance(kinds, str):
        return
    for name, kind in json.loads(expand(kinds, {})).items():
        value = entries.get(LaunchSettings.ARG_PREFIX + name)
        read = kube_values.reads(value) if isinstance(value, Placeholder) else None
        if read is not None and kind == "json":
            uses.add(read.variable, "json")


def _check_kind(name: str, text: str, kinds: set[str]) -> None:
    if "integer" in kinds and not _INTEGER.fullmatch(text):
        raise ValidationError(f"arguments.{name}", f"must be an integer (the job reads it as one), got {text!r}")
    if "json" in kinds:
        try:
            json.loads(text, parse_constant=_not_json)
        except ValueError:
            raise ValidationError(
                f"arguments.{name}",
                f"must be JSON (the job reads it as JSON: its Placeholder's sample is not a string), got {text!r}",
            ) from None


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def _sample(text: str, kind: str) -> object:
    """The value a placeholder stands for in the job, as the rules check it."""
    if kind == "integer":
        return int(text)
    return json.loads(text) if kind == "json" else text


# ------------------------------------------------------------------------------------------------- the pods


def _tasks(spec: Mapping[str, Any], given: Mapping[str, str]) -> Iterator[_Task]:
    for task in as_list(spec.get("tasks")):
        task = as_map(task)
        name = str(task.get("name"))
        pod = as_map(as_map(task.get("template")).get("spec"))
        containers = [as_map(c) for c in as_list(pod.get("containers"))]
        main = next((c for c in containers if c.get("name") == name), containers[0] if containers else {})
        replicas = task.get("replicas", 1)
        count = int(_text(replicas, given, {})) if isinstance(replicas, Placeholder) else int(replicas)
        yield _Task(name, count, main)


def _flags(args: object) -> dict[str, str]:
    """A plugin's ``--key=value`` arguments."""
    found = (str(a).removeprefix("--").partition("=") for a in as_list(args))
    return {key: value for key, _, value in found}


def _env(container: Mapping[str, Any], given: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The container's variables as its process gets them (each value expanded with those before it), and a note
    for each the cluster fills in (``valueFrom``), which a local run leaves unset."""
    env: dict[str, str] = {}
    notes = []
    for item in as_list(container.get("env")):
        item = as_map(item)
        name = str(item.get("name"))
        if "valueFrom" in item:
            notes.append(f"{name} is read from the cluster (valueFrom): not set in a local run")
        else:
            env[name] = _text(item.get("value", ""), given, env)
    return env, notes


def _text(node: object, given: Mapping[str, str], defined: Mapping[str, str]) -> str:
    """What the process gets for a command's element or an env value: a run-time value exactly, and text with
    the kubelet's expansion (``defined``: the variables it may name)."""
    if isinstance(node, kube_values.Exact):
        return str.__str__(node)
    if isinstance(node, Placeholder):
        read = kube_values.reads(node)
        if read is not None:
            return given[read.variable]
        return _joined(str(node.sample), given, defined)
    if isinstance(node, str):
        return _joined(node, given, defined) if "{{" in node else expand(node, defined)
    return json.dumps(node) if isinstance(node, bool | list | dict) or node is None else str(node)


def _joined(text: str, given: Mapping[str, str], defined: Mapping[str, str]) -> str:
    """Text joining run-time values with literal parts (each part expanded on its own, as the kubelet does); Argo's
    own variables as a sample workflow's."""
    out, last = [], 0
    for tag in re.finditer(r"\{\{\s*(.*?)\s*\}\}", text, re.DOTALL):
        out.append(expand(text[last : tag.start()], defined))
        read = kube_values.parse(tag.group(1))
        out.append(given[read.variable] if read is not None else WORKFLOW_SAMPLES.get(tag.group(1), tag.group(0)))
        last = tag.end()
    out.append(expand(text[last:], defined))
    return "".join(out)


def _command(
    container: Mapping[str, Any], given: Mapping[str, str], defined: Mapping[str, str], python: str
) -> tuple[list[str], bool]:
    """The container's command as its process gets it, and whether it runs the launcher; the launcher (a command
    naming ``python3``) runs under ``python``."""
    argv = [_text(a, given, defined) for a in as_list(container.get("command"))]
    boot = pods_program.launcher_bootstrap()
    at = next((i for i, a in enumerate(argv) if a == boot), None)
    if at is not None and at >= 3:
        return [python, *argv[at - 2 : at + 2]], True
    if argv and argv[0] in PYTHONS:
        argv[0] = python
    return argv, False


def _size(processes: int | None, default: int) -> int:
    return default if processes is None else processes


# ------------------------------------------------------------------------------------------------- the kinds


def _pytorch(
    tasks: Mapping[str, _Task],
    flags: Mapping[str, str],
    given: Mapping[str, str],
    python: str,
    free_port: Callable[[], int],
    processes: int | None,
) -> LocalPlan:
    """torchrun's variables for a Python program on one node of N processes; a command gets the pytorch plugin's
    (one process per pod, whose command starts torchrun itself)."""
    master = tasks[flags.get("master", "master")]
    pods = master.replicas + sum(t.replicas for n, t in tasks.items() if n == flags.get("worker", "worker"))
    env, notes = _env(master.container, given)
    port = str(free_port())
    argv, launcher = _command(master.container, given, env, python)
    if not launcher:
        count = _size(processes, pods)
        ranks = []
        for i in range(count):
            plugin = {"MASTER_ADDR": LOOPBACK, "MASTER_PORT": port, "WORLD_SIZE": str(count), "RANK": str(i)}
            own, _ = _command(master.container, given, {**env, **plugin}, python)
            ranks.append(Rank(i, tuple(own), {**env, **plugin}))
        return LocalPlan("torchrun", tuple(ranks), False, tuple(notes))
    per_pod = next((a.partition("=")[2] for a in _raw_command(master) if a.startswith("--nproc_per_node=")), "1")
    world = _size(processes, pods * int(per_pod))
    ranks = [Rank(i, tuple(argv), {**env, **_torchrun(i, world, port)}) for i in range(world)]
    return LocalPlan("torchrun", tuple(ranks), True, tuple(notes))


def _raw_command(task: _Task) -> list[str]:
    return [a for a in as_list(task.container.get("command")) if isinstance(a, str)]


def _torchrun(rank: int, world: int, port: str) -> dict[str, str]:
    """What ``torchrun --nproc_per_node=WORLD`` gives each of its processes on one node."""
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world),
        "LOCAL_WORLD_SIZE": str(world),
        "GROUP_RANK": "0",
        "GROUP_WORLD_SIZE": "1",
        "ROLE_RANK": str(rank),
        "ROLE_WORLD_SIZE": str(world),
        "ROLE_NAME": "default",
        "MASTER_ADDR": LOOPBACK,
        "MASTER_PORT": port,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": "0",
    }


def _tensorflow(
    tasks: Mapping[str, _Task],
    flags: Mapping[str, str],
    given: Mapping[str, str],
    python: str,
    free_port: Callable[[], int],
    processes: int | None,
) -> LocalPlan:
    """``TF_CONFIG`` for every process, in the order of their global ranks (the chief, the workers, the parameter
    servers, the evaluators), each address a port of this machine."""
    counts = {role: tasks[flags[role]].replicas for role in TF_ROLES if flags.get(role) in tasks}
    if processes is not None:
        others = sum(n for role, n in counts.items() if role != "worker")
        if processes <= others:
            raise ValidationError(
                "processes",
                f"must be more than the job's {others} chief, ps and evaluator processes (workers: the rest)",
            )
        counts["worker"] = processes - others
    lead = tasks[flags["chief"] if "chief" in counts else flags["worker"]]
    env, notes = _env(lead.container, given)
    cluster = {role: [f"{LOOPBACK}:{free_port()}" for _ in range(n)] for role, n in sorted(counts.items())}
    ranks: list[Rank] = []
    launcher = False
    for role in (r for r in TF_ROLES if r in counts):
        for index in range(counts[role]):
            config = {"cluster": cluster, "task": {"type": role, "index": index}}
            own = {**env, "TF_CONFIG": json.dumps(config, separators=(",", ":"))}
            argv, launcher = _command(lead.container, given, own, python)
            ranks.append(Rank(len(ranks), tuple(argv), own))
    return LocalPlan("tensorflow", tuple(ranks), launcher, tuple(notes))


def _mpi_script(container: Mapping[str, Any]) -> str | None:
    """The MPI master's script (``/bin/sh -c SCRIPT sh RANKS_COMMAND...``), if ``container`` runs one."""
    command = as_list(container.get("command"))
    script = command[2] if len(command) > 3 and command[:2] == ["/bin/sh", "-c"] else None
    return script if isinstance(script, str) and _MPIEXEC_RANKS.search(script) and command[3] == "sh" else None


def _mpi(master: _Task, given: Mapping[str, str], python: str, processes: int | None) -> LocalPlan:
    """``mpiexec -np RANKS`` as the master runs it, the ranks' command after the script."""
    script = _mpi_script(master.container) or ""
    found = _MPIEXEC_RANKS.search(script)
    count = _size(processes, int(found.group(1)) if found else 1)
    env, notes = _env(master.container, given)
    ranks_run = {**master.container, "command": as_list(master.container.get("command"))[4:]}
    argv, launcher = _command(ranks_run, given, env, python)
    ranks = tuple(Rank(i, tuple(argv), env) for i in range(count))
    return LocalPlan("mpi", ranks, launcher, tuple(notes))


def _batch(task: _Task, given: Mapping[str, str], python: str, processes: int | None) -> LocalPlan:
    """One process per replica, each with its index as Volcano's env plugin sets it."""
    env, notes = _env(task.container, given)
    ranks = []
    for i in range(_size(processes, task.replicas)):
        own = {**env, **dict.fromkeys(TASK_INDEX, str(i))}
        argv, launcher = _command(task.container, given, own, python)
        ranks.append(Rank(i, tuple(argv), own))
    return LocalPlan("replica", tuple(ranks), launcher, tuple(notes))
