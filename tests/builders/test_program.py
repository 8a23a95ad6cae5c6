"""A job's program (``program=hv.Program.command/function/script/module``): what each builder renders, and every
refusal, each a ValidationError naming the argument and the reason."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.builders import program
from hera_volcano.builders.pytorch import TORCHRUN_OPTIONS
from hera_volcano.kube import values
from hera_volcano.pods import program as pods_program
from hera_volcano.pods.launcher import LaunchSettings
from tests.builders import userfuncs
from tests.builders.podsim import container

# A module-level name, which a function using it would need in the pod.
CONSTANT = 3


def uses_a_module_name() -> int:
    return CONSTANT + len(json.dumps([]))


def defaults_from_the_module(x: int = CONSTANT) -> None:
    pass


def recursive(n: int) -> int:
    global COUNTER
    COUNTER = n
    return n if n < 1 else recursive(n - 1) + COUNTER


@functools.lru_cache
def decorated() -> None:
    pass


def registered(f: Any) -> Any:
    return f


@registered
def decorated_plainly() -> None:
    pass


async def asynchronous() -> None:
    pass


def generator() -> Any:
    yield 1


class Holder:
    def method(self) -> None:
        pass


def closure_maker() -> Any:
    value = 1

    def inner() -> int:
        return value

    return inner


def env_of(data: dict[str, Any], task: str) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container(data, task).get("env", [])}


# ---- what each builder renders ---------------------------------------------------------------------------------


def assert_mounts_the_launcher(data: dict[str, Any], task: str) -> None:
    """The task's container runs the launcher from the pods' ConfigMap: its pod has the volume, the container the
    mount (a job carries the few lines of the bootstrap, not the launcher)."""
    spec = next(t for t in data["spec"]["tasks"] if t["name"] == task)["template"]["spec"]
    assert pods_program.volume() in spec["volumes"], task
    assert pods_program.mount() in spec["containers"][0]["volumeMounts"], task


def test_a_command_job_mounts_no_launcher() -> None:
    data = hv.pytorch_job(image="img", program=hv.Program.command(["train"])).to_dict()
    spec = data["spec"]["tasks"][0]["template"]["spec"]
    assert "volumes" not in spec and "volumeMounts" not in spec["containers"][0]


def test_pytorch_runs_the_function_under_torchrun_on_every_pod() -> None:
    data = hv.pytorch_job(
        image="img", program=hv.Program.function(userfuncs.typed, args={"lr": 0.5}), nproc_per_node=4
    ).to_dict()
    for task in ("master", "worker"):
        spec = container(data, task)
        assert spec["command"] == [
            *hv.torchrun(*TORCHRUN_OPTIONS, "--no_python", nproc_per_node=4),
            "python3",
            "-u",
            "-c",
            pods_program.launcher_bootstrap(),
            "torchrun",
        ]
        assert_mounts_the_launcher(data, task)
        env = env_of(data, task)
        assert json.loads(env[LaunchSettings.RUN]) == {
            "function": "typed",
            "file": "userfuncs.py",
            "line": userfuncs.typed.__code__.co_firstlineno,
            "future": ["annotations"],
        }
        assert env[LaunchSettings.SOURCE].startswith("def typed(lr: float, epochs: int = 1")
        assert json.loads(env[LaunchSettings.ARGS]) == {"lr": 0.5}
    assert "--nnodes=$(WORLD_SIZE)" in spec["command"] and "--node_rank=$(RANK)" in spec["command"]


def test_mpi_runs_the_function_on_every_rank_with_its_variables_passed_on() -> None:
    data = hv.mpi_job(
        image="img", program=hv.Program.function(userfuncs.typed, args={"lr": 0.5}), workers=3, slots_per_worker=2
    ).to_dict()
    master, script = container(data, "mpimaster"), container(data, "mpimaster")["command"][2]
    names = [e["name"] for e in master["env"]]
    assert names == [LaunchSettings.RUN, LaunchSettings.SOURCE, LaunchSettings.ARGS]
    exports = "".join(f" -x {name}" for name in names)
    assert script.endswith(f'exec mpiexec --allow-run-as-root{exports} --host "$HOSTS" -np 6 "$@"\n')
    assert master["command"][3:] == ["sh", "python3", "-u", "-c", pods_program.launcher_bootstrap(), "mpi"]
    assert "env" not in container(data, "mpiworker"), "the ranks get the variables from mpiexec"
    assert_mounts_the_launcher(data, "mpiworker")  # where mpiexec starts the ranks


def test_batch_jobs_running_one_function_share_a_template_and_pass_their_arguments() -> None:
    jobs = [
        hv.batch_job(image="img", program=hv.Program.function(userfuncs.typed, args={"lr": 0.5})),
        hv.batch_job(image="img", program=hv.Program.function(userfuncs.typed, args={"lr": 0.1, "epochs": 2})),
        hv.batch_job(image="img", program=hv.Program.function(userfuncs.echo)),
        hv.batch_job(image="img", program=hv.Program.command(["true"])),
    ]
    assert jobs[0].tasks is jobs[1].tasks, "one function, one template"
    assert len({id(j.tasks) for j in jobs}) == 3
    assert [list(j.arguments) for j in jobs] == [
        ["image", "func-args", "replicas", "min-available"],
        ["image", "func-args", "replicas", "min-available"],
        ["image", "func-args", "replicas", "min-available"],
        ["image", "command", "replicas", "min-available"],
    ]
    assert json.loads(jobs[1].arguments["func-args"]) == {"lr": 0.1, "epochs": 2}
    assert jobs[2].arguments["func-args"] == "{}"
    job = jobs[0]
    assert [p.name for p in job.plugins] == ["env"], "VC_TASK_INDEX: which replica reports"
    spec = job.tasks[0].template["spec"]["containers"][0]
    assert spec["command"] == ["python3", "-u", "-c", pods_program.launcher_bootstrap(), "replica"]
    assert_mounts_the_launcher(jobs[1].to_dict(), "main")
    args = next(e["value"] for e in spec["env"] if e["name"] == LaunchSettings.ARGS)
    assert args == hv.Placeholder.input("func-args", "{}")
    assert json.loads(env_of(jobs[1].to_dict(), "main")[LaunchSettings.ARGS]) == {"lr": 0.1, "epochs": 2}
    pipeline = hv.Pipeline([hv.PipelineJob(name, job) for name, job in zip("abcd", jobs, strict=True)])
    assert len(pipeline.templates()[0]) == 3


def test_a_tensorflow_job_runs_the_function_in_every_pod_the_chief_reporting() -> None:
    data = hv.tensorflow_job(
        image="img", program=hv.Program.function(userfuncs.typed, args={"lr": 0.5}), ps=1
    ).to_dict()
    for task in ("chief", "ps", "worker"):
        spec = container(data, task)
        assert spec["command"] == ["python3", "-u", "-c", pods_program.launcher_bootstrap(), "tensorflow"]
        assert_mounts_the_launcher(data, task)
        assert json.loads(env_of(data, task)[LaunchSettings.ARGS]) == {"lr": 0.5}
    assert data["metadata"]["annotations"]["hera-volcano/lead-task"] == "chief"


@pytest.mark.parametrize(
    ("kwargs", "run"),
    [
        ({"name": "pkg.train"}, {"module": "pkg.train"}),
        ({"name": "train", "args": {"a": 1}}, {"module": "train"}),
    ],
)
def test_a_module_runs_from_the_image_without_inlined_source(kwargs: dict[str, Any], run: dict[str, Any]) -> None:
    env = env_of(hv.pytorch_job(image="img", program=hv.Program.module(**kwargs)).to_dict(), "master")
    assert json.loads(env[LaunchSettings.RUN]) == run and LaunchSettings.SOURCE not in env
    assert json.loads(env[LaunchSettings.ARGS]) == kwargs.get("args", {})


def test_a_script_is_read_when_the_job_is_built(tmp_path: Path) -> None:
    path = tmp_path / "prep.py"
    path.write_text("print('prep')\n")
    env = env_of(hv.mpi_job(image="img", program=hv.Program.script(path)).to_dict(), "mpimaster")
    assert json.loads(env[LaunchSettings.RUN]) == {"script": "prep.py"}
    assert env[LaunchSettings.SOURCE] == "print('prep')\n"


def test_dollars_are_doubled_and_braces_escaped_so_nothing_is_substituted() -> None:
    data = hv.pytorch_job(
        image="img", program=hv.Program.function(userfuncs.braces_and_dollars, args=None), workers=1
    ).to_dict()
    env = env_of(data, "master")
    assert "$$(HOME) $$$$" in env[LaunchSettings.SOURCE], "Kubernetes turns $$ into $"
    job = hv.pytorch_job(image="img", program=hv.Program.function(userfuncs.echo, args={"t": "{{x}} $(Y)"}), workers=1)
    args = env_of(job.to_dict(), "master")[LaunchSettings.ARGS]
    assert args == '{"t":"{\\u007bx}} $$(Y)"}'
    assert json.loads(args.replace("$$", "$")) == {"t": "{{x}} $(Y)"}


def test_a_command_job_renders_as_before() -> None:
    assert (
        hv.pytorch_job(image="img", program=hv.Program.command(["true"])).to_dict()
        == hv.pytorch_job(image="img", program=hv.Program.command(["true"]), nproc_per_node=1).to_dict()
    )
    spec = container(hv.mpi_job(image="img", program=hv.Program.command(["hello"])).to_dict(), "mpimaster")
    assert "env" not in spec and spec["command"][2].rstrip().endswith('-np 2 "$@"') and spec["command"][4:] == ["hello"]


def test_runtime_values_become_inputs_of_the_jobs_template() -> None:
    job = hv.mpi_job(
        image="img",
        program=hv.Program.function(
            userfuncs.echo,
            args={"lr": hv.Placeholder.input("lr", "0.1"), "steps": hv.Placeholder.input("total-steps", 10)},
        ),
        pod=hv.PodSettings(env={"TAG": hv.Placeholder.workflow_parameter("tag", "v1")}),
        service_account="mpi",
    )
    template = hv.job_template(job, name="train", defaults={"lr": "0.2"})
    assert [(p.name, p.default) for p in template.inputs] == [("lr", "0.2"), ("total-steps", None)]
    env = env_of(job.to_dict(), "mpimaster")
    assert json.loads(env[LaunchSettings.RUNTIME_ARGS]) == {"lr": "text", "steps": "json"}
    assert values.parse(env[LaunchSettings.ARG_PREFIX + "steps"].expression) == values.Value(
        "inputs", "total-steps", "text", 1
    )
    assert values.parse(env["TAG"].expression) == values.Value("workflow", "tag", "text", 1)
    assert (
        f"-x {LaunchSettings.ARG_PREFIX}lr -x {LaunchSettings.ARG_PREFIX}steps -x TAG"
        in container(job.to_dict(), "mpimaster")["command"][2]
    )


# ---- refusals ----------------------------------------------------------------------------------------------------


def refused(field: str, rule: str, builder: Any = hv.pytorch_job, **kwargs: Any) -> None:
    """The user's call, its program made from ``command``, ``func``, ``script`` or ``module`` (and ``args``) inside
    it, is refused naming ``field`` for ``rule``."""
    kwargs.setdefault("image", "img")
    with pytest.raises(hv.ValidationError) as caught:
        builder(program=make_program(kwargs), **kwargs)
    assert (caught.value.field, caught.value.rule) == (field, rule)


def make_program(kwargs: dict[str, Any]) -> hv.Program:
    args = kwargs.pop("args", None)
    if "command" in kwargs:
        return hv.Program.command(kwargs.pop("command"))
    if "func" in kwargs:
        return hv.Program.function(kwargs.pop("func"), args=args)
    if "script" in kwargs:
        return hv.Program.script(kwargs.pop("script"), args=args)
    return hv.Program.module(kwargs.pop("module"), args=args)


@pytest.mark.parametrize("builder", [hv.pytorch_job, hv.mpi_job, hv.tensorflow_job, hv.batch_job])
@pytest.mark.parametrize("given", [["python3", "train.py"], None, userfuncs.echo, "train.py"])
def test_the_program_is_a_program_value(builder: Any, given: Any) -> None:
    with pytest.raises(hv.ValidationError) as caught:
        builder(image="img", program=given)
    assert caught.value.field == "program" and "Program.command" in caught.value.rule
    with pytest.raises(hv.ValidationError) as caught:
        hv.Program()
    assert caught.value.field == "program"


NOT_TOP_LEVEL = "must be a function defined with def at a module's top level, not "


@pytest.mark.parametrize(
    ("func", "rule"),
    [
        (lambda: None, "is a lambda, which has no name to call: define it with def at top level"),
        (
            closure_maker(),
            "inner is a nested function or a closure: define it at a module's top level (only it travels)",
        ),
        (Holder.method, "Holder.method is defined in a class: define it at a module's top level"),
        (Holder().method, NOT_TOP_LEVEL + "method"),
        (len, NOT_TOP_LEVEL + "builtin_function_or_method"),
        (functools.partial(userfuncs.echo, a=1), NOT_TOP_LEVEL + "partial"),
        (Holder, NOT_TOP_LEVEL + "type"),
        (decorated, NOT_TOP_LEVEL + "_lru_cache_wrapper"),
        (decorated_plainly, "decorated_plainly is decorated: the decorator would not travel with it"),
        (asynchronous, "asynchronous must be a plain function (not async, not a generator)"),
        (generator, "generator must be a plain function (not async, not a generator)"),
        (
            uses_a_module_name,
            "uses_a_module_name uses CONSTANT, json from its module, which does not travel with it: import or define "
            "what it needs inside the function",
        ),
        (
            defaults_from_the_module,
            "defaults_from_the_module uses CONSTANT from its module, which does not travel with it: import or define "
            "what it needs inside the function",
        ),
    ],
)
def test_functions_that_cannot_travel_are_refused(func: Any, rule: str) -> None:
    refused("func", rule, func=func)


def test_a_function_whose_source_cannot_be_read_is_refused() -> None:
    namespace: dict[str, Any] = {}
    exec("def typed_in():\n    return 1\n", namespace)
    refused(
        "func",
        "the source of typed_in cannot be read (typed in an interpreter, or made by exec?): put it in a file",
        func=namespace["typed_in"],
    )


def test_what_a_function_defines_for_itself_travels() -> None:
    env = env_of(hv.pytorch_job(image="img", program=hv.Program.function(recursive, args={"n": 2})).to_dict(), "master")
    assert env[LaunchSettings.SOURCE].startswith("def recursive(n: int) -> int:\n    global COUNTER")


@pytest.mark.parametrize(
    ("args", "field", "rule"),
    [
        ([1], "args", "must be a mapping of argument names to JSON values"),
        ({"not valid": 1}, "args['not valid']", "must be a keyword argument's name (a Python identifier, ASCII)"),
        ({"class": 1}, "args['class']", "must be a keyword argument's name (a Python identifier, ASCII)"),
        ({"é": 1}, "args['é']", "must be a keyword argument's name (a Python identifier, ASCII)"),
        (
            {"a": (1, 2)},
            "args['a']",
            "does not survive a JSON round trip (a tuple comes back a list, a non-string key a string...)",
        ),
        (
            {"a": {1: "x"}},
            "args['a']",
            "does not survive a JSON round trip (a tuple comes back a list, a non-string key a string...)",
        ),
        (
            {"a": float("nan")},
            "args['a']",
            "must be a JSON value (Out of range float values are not JSON compliant)",
        ),
        ({"a": {1, 2}}, "args['a']", "must be a JSON value (Object of type set is not JSON serializable)"),
        ({"a": "\ud800"}, "args['a']", "must be valid Unicode text (it holds a lone surrogate)"),
        (
            {"a": hv.Placeholder("=sprig.upper('x')", "X", quoted=False)},
            "args['a']",
            "a value known at run time is Placeholder.input(...) or Placeholder.workflow_parameter(...), not "
            "{{=sprig.upper('x')}}",
        ),
    ],
)
def test_arguments_that_do_not_survive_json_are_refused(args: Any, field: str, rule: str) -> None:
    refused(field, rule, module="m", args=args)


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (
            {},
            "do not fit typed(lr: 'float', epochs: 'int' = 1, tag: 'str' = '') -> 'dict[str, float | str]': "
            "missing a required argument: 'lr'",
        ),
        (
            {"lr": 1, "rate": 2},
            "do not fit typed(lr: 'float', epochs: 'int' = 1, tag: 'str' = '') -> "
            "'dict[str, float | str]': got an unexpected keyword argument 'rate'",
        ),
        (
            {"lr": 1, "rate": hv.Placeholder.input("rate", "1")},
            "do not fit typed(lr: 'float', epochs: 'int' = 1, "
            "tag: 'str' = '') -> 'dict[str, float | str]': got an unexpected keyword argument 'rate'",
        ),
    ],
)
def test_arguments_must_fit_the_functions_signature(args: dict[str, Any], rule: str) -> None:
    refused("args", rule, func=userfuncs.typed, args=args)


def test_too_much_inlined_code_or_data_is_refused(tmp_path: Path) -> None:
    def rule(size: int) -> str:
        return (
            f"inlines {size} bytes of source and arguments, over {program.MAX_INLINE} (Kubernetes' limits): put the "
            "code in the image and use Program.module, and large data on a volume"
        )

    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * (program.MAX_INLINE // 6 + 1))
    refused("script", rule(big.stat().st_size + len("{}")), script=big)
    wrapped = len('{"a":""}')
    refused("args", rule(program.MAX_INLINE + 1 + wrapped), module="m", args={"a": "x" * (program.MAX_INLINE + 1)})
    # counted as written: each $ twice
    refused(
        "args",
        rule(program.MAX_INLINE + 2 + wrapped),
        module="m",
        args={"a": "$" * (program.MAX_INLINE // 2 + 1)},
    )
    small = tmp_path / "small.py"
    small.write_text("x = 1\n")
    hv.pytorch_job(image="img", program=hv.Program.script(small, args={"a": "x" * (program.MAX_INLINE - wrapped - 6)}))


def test_unreadable_or_broken_scripts_are_refused(tmp_path: Path) -> None:
    refused(
        "script", f"{tmp_path / 'absent.py'} cannot be read: No such file or directory", script=tmp_path / "absent.py"
    )
    refused("script", f"{tmp_path} cannot be read: Is a directory", script=tmp_path)
    (tmp_path / "latin.py").write_bytes(b"# \xe9\n")
    refused("script", f"{tmp_path / 'latin.py'} is not UTF-8 text", script=tmp_path / "latin.py")
    (tmp_path / "broken.py").write_text("x = 1\ndef (:\n")
    refused(
        "script",
        f"{tmp_path / 'broken.py'} is not valid Python (line 2): invalid syntax",
        script=tmp_path / "broken.py",
    )
    refused("script", "must be the path of a Python file", script=3)


@pytest.mark.parametrize("module", ["", "1abc", "pkg..train", "pkg.class", "a-b", "pkg/train", 3])
def test_module_names_are_checked(module: Any) -> None:
    refused("module", "must be a module name such as pkg.train (identifiers joined by '.')", module=module)


@pytest.mark.parametrize("builder", [hv.pytorch_job, hv.mpi_job, hv.tensorflow_job, hv.batch_job])
def test_pod_settings_may_not_set_the_launchers_variables(builder: Any) -> None:
    rule = "is the launcher's (HERA_VOLCANO_*): choose another name"
    refused(
        f"pod.env[{LaunchSettings.ARGS!r}]",
        rule,
        builder,
        module="m",
        pod=hv.PodSettings(env={LaunchSettings.ARGS: "x"}),
    )
    builder(
        image="img",
        program=hv.Program.command(["x"]),
        pod=hv.PodSettings(env={LaunchSettings.ARGS: "{}"}),
    )  # a command job may use the name


def test_nproc_per_node_goes_with_a_program() -> None:
    refused(
        "nproc_per_node",
        "goes with a Python program (with Program.command: hv.torchrun(nproc_per_node=))",
        command=["x"],
        nproc_per_node=2,
    )
    refused("nproc_per_node", "must be a positive integer", module="m", nproc_per_node=0)
