"""The settings every builder shares arrive one way (``**settings: Unpack[JobSettings]``), are checked once, and
mean the same on each builder."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import hera_volcano as hv
from hera_volcano.builders.settings import KEYS, JobSettings, checked

IMAGE = "python:3.12-slim"
PROGRAM = hv.Program.command(["true"])
BUILDERS: dict[str, Callable[..., hv.VolcanoJob]] = {
    "mpi_job": lambda **kw: hv.mpi_job(image=IMAGE, program=PROGRAM, **kw),
    "pytorch_job": lambda **kw: hv.pytorch_job(image=IMAGE, program=PROGRAM, **kw),
    "tensorflow_job": lambda **kw: hv.tensorflow_job(image=IMAGE, program=PROGRAM, **kw),
    "batch_job": lambda **kw: hv.batch_job(image=IMAGE, program=PROGRAM, **kw),
}
builders = pytest.mark.parametrize("builder", list(BUILDERS))


def test_checked_fills_every_key_with_the_builder_s_defaults() -> None:
    settings = checked({}, "pytorch_job")
    assert tuple(settings) == KEYS
    assert settings["generate_name"] == "pytorch-job-"
    assert settings["start_limit"] == 86400
    assert settings["working_dir"] is None
    assert checked({}, "mpi_job", working_dir="/home")["working_dir"] == "/home"
    assert checked({"name": "fixed"}, "mpi_job")["generate_name"] is None
    assert checked({"start_limit": None}, "mpi_job")["start_limit"] is None


@builders
def test_one_settings_dict_gives_every_builder_the_same_job_settings(builder: str) -> None:
    shared: JobSettings = {
        "generate_name": "nightly-",
        "queue": hv.Queue("research"),
        "priority_class_name": "batch-low",
        "deadline": 600,
        "start_limit": None,
        "retry": hv.ArgoRetry(limit=2),
    }
    job = BUILDERS[builder](**shared)
    assert (job.generate_name, job.deadline, job.start_limit, job.retry) == ("nightly-", 600, None, hv.ArgoRetry(2))
    spec = job.to_dict()["spec"]
    assert (spec["queue"], spec["priorityClassName"]) == ("research", "batch-low")


@builders
@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"working_dir": "relative"}, "working_dir"),
        ({"priority_class_name": "Not A Name"}, "priority_class_name"),
        ({"deadline": 0}, "deadline"),
        ({"start_limit": "1h"}, "start_limit"),
        ({"retry": 3}, "retry"),
        ({"pod": {"cpu": "1"}}, "pod"),
        ({"name": 7}, "name"),
    ],
)
def test_a_bad_shared_setting_is_refused_naming_it(builder: str, settings: dict[str, object], field: str) -> None:
    with pytest.raises(hv.ValidationError) as e:
        BUILDERS[builder](**settings)
    assert e.value.field == field


@builders
def test_a_keyword_no_builder_takes_is_a_type_error_naming_the_builder(builder: str) -> None:
    with pytest.raises(TypeError, match=rf"{builder}\(\) got an unexpected keyword argument 'sevice_account'"):
        BUILDERS[builder](sevice_account="trainer")


def test_mpi_without_a_working_dir_leaves_the_image_s() -> None:
    job = hv.mpi_job(image=IMAGE, program=PROGRAM, working_dir=None).to_dict()
    containers = [c for t in job["spec"]["tasks"] for c in t["template"]["spec"]["containers"]]
    assert containers and all("workingDir" not in c for c in containers)
    job = hv.mpi_job(image=IMAGE, program=PROGRAM).to_dict()
    assert {c["workingDir"] for t in job["spec"]["tasks"] for c in t["template"]["spec"]["containers"]} == {"/home"}
