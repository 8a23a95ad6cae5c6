"""The pods' program apart from RBAC: ``program_for`` gives its ConfigMap for each namespace whose pods mount it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from hera_volcano import Program, ValidationError, mpi_job, pytorch_job
from hera_volcano.argo.follow_logs import follow_logs_template
from hera_volcano.pods import program
from hera_volcano.tools.program import program_for
from tests.builders import userfuncs
from tests.job_steps import job_step
from tests.tools.test_rbac import resource, resource_of, wf


def test_each_namespace_whose_followers_mount_the_program_gets_its_config_map() -> None:
    follower = resource_of(follow_logs_template(job_step("train"), name="f"))
    other = {**wf([follower]), "metadata": {"name": "v", "namespace": "team-b"}}
    assert program_for(wf([follower]), other) == [program.config_map("ns"), program.config_map("team-b")]
    assert program_for(wf([follower]), namespace="ml") == [program.config_map("ml")], "namespace= overrides"
    assert program_for(wf([{"name": "c", "container": {"image": "alpine"}}])) == [], "no follower, no program"


def test_a_pod_mounting_another_versions_program_is_refused() -> None:
    follower = resource_of(follow_logs_template(job_step("train"), name="f"))
    older = {**follower, "volumes": [{"name": "p", "configMap": {"name": "hera-volcano-follower-000000000000"}}]}
    with pytest.raises(ValidationError, match=r"w/f\.volumes: mounts the pods' program hera-volcano-follower-0+,"):
        program_for(wf([older]))


def test_the_mpi_masters_wait_gets_the_program_in_its_jobs_namespace() -> None:
    job = mpi_job(image="x:1", program=Program.command(["a"]), service_account="mpi", name="j").to_dict()
    job["metadata"]["namespace"] = "team-b"
    assert program_for(wf([resource("create", yaml.safe_dump(job))])) == [program.config_map("team-b")]
    for volume in job["spec"]["tasks"][0]["template"]["spec"]["volumes"]:
        if "configMap" in volume:
            volume["configMap"]["name"] = "hera-volcano-follower-000000000000"
    with pytest.raises(ValidationError, match=r"\(Volcano task mpimaster\)\.volumes: mounts the pods' program"):
        program_for(wf([resource("create", yaml.safe_dump(job))]))


def test_a_function_jobs_namespace_gets_the_launcher() -> None:
    data: dict[str, Any] = pytorch_job(
        image="x:1", program=Program.function(userfuncs.echo), service_account="trainer", name="j"
    ).to_dict()
    data["metadata"]["namespace"] = "team-c"
    assert program_for(wf([resource("create", json.dumps(data))])) == [program.config_map("team-c")]
    command = pytorch_job(image="x:1", program=Program.command(["train"]), name="j").to_dict()
    assert program_for(wf([resource("create", yaml.safe_dump(command))])) == []


def test_workflows_are_checked_as_rbac_for_checks_them() -> None:
    with pytest.raises(ValidationError, match="give at least one workflow"):
        program_for()
    with pytest.raises(ValidationError, match=r"workflows\[0\]\.kind"):
        program_for({"kind": "Pod"})
