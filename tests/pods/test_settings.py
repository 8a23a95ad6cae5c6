"""The follower's settings are its contract with the template that starts it and with lint: ``to_env`` and
``from_env`` are each other's inverse, and no environment variable name of it is spelled anywhere but in the
settings class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hera_volcano.argo.follow_logs import follow_logs_template
from hera_volcano.pods.run import OUTPUT_DIR, Settings
from hera_volcano.shared.placeholders import Placeholder
from hera_volcano.volcano.step import ArgoRetry
from tests.job_steps import job_step

ROOT = Path(__file__).resolve().parents[2]
JOBS = "workflows.argoproj.io/workflow={{workflow.name}},hera-volcano/job={{inputs.parameters.x}}"
PODS = "hera-volcano/workflow={{workflow.name}},hera-volcano/job={{inputs.parameters.x}}"
NAMES = sorted(value for key, value in vars(Settings).items() if key.isupper() and isinstance(value, str))

SETTINGS = [
    Settings(jobs="a=b", pods="c=d"),
    Settings(jobs=JOBS, pods=PODS, task="master", container="main", limit=600, grace=30, start_limit=86400),
    Settings(jobs=JOBS, pods=PODS, node="wf.job(0:{{item}})", step_retries=2, outputs=("loss", "model")),
    Settings(jobs="a=b", pods="c=d", outputs=("loss",), output_dir="/out", termination_log="/tmp/t", drain=1.5),
    Settings(jobs="a=b", pods="c=d", step_grace=2, retry_grace=7, backoff_max=2, tick=0.2),
    Settings(jobs="a=b", pods="c=d", start_limit=60, quiet=True),
    Settings(jobs="a=b", pods="c=d", progress_file="/var/run/argo/progress", publish_every=2),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_settings_come_back_from_the_environment_they_write(settings: Settings) -> None:
    assert Settings.from_env(settings.to_env()) == settings


def test_the_environment_holds_what_the_template_always_sets_and_the_rest_only_when_not_the_default() -> None:
    assert list(Settings(jobs="a=b", pods="c=d").to_env()) == NAMES_ALWAYS
    env = Settings(jobs="a=b", pods="c=d", outputs=("loss",), drain=1.5).to_env()
    assert (env[Settings.OUTPUTS], env[Settings.OUTPUT_DIR], env[Settings.DRAIN_SECONDS]) == ("loss", OUTPUT_DIR, "1.5")
    assert env[Settings.FOLLOW_SECONDS] == env[Settings.START_SECONDS] == "0", "0: no limit"


NAMES_ALWAYS = [
    Settings.JOB_SELECTOR,
    Settings.POD_SELECTOR,
    Settings.TASK,
    Settings.CONTAINER,
    Settings.FOLLOW_SECONDS,
    Settings.GRACE_SECONDS,
    Settings.START_SECONDS,
    Settings.STEP_RETRIES,
]


def test_the_template_writes_the_settings_the_follower_reads() -> None:
    step = job_step("run", Placeholder.input("x", "mpi"), retry=ArgoRetry(2))
    template = follow_logs_template(step, task="master", timeout=600, outputs=["loss"])
    env = {e.name: e.value for e in template.env or [] if getattr(e, "value", None) is not None}
    [node] = [e for e in template.env or [] if e.name == Settings.NODE_NAME]
    assert Settings.from_env(env) == Settings(
        jobs=JOBS, pods=PODS, task="master", limit=600, start_limit=86400, step_retries=2, outputs=("loss",)
    )
    assert "node-name" in str(node.field_path), "the follower's own Argo node comes from its pod's annotation"


def test_no_name_of_the_followers_environment_is_spelled_outside_its_settings_class() -> None:
    spelled = re.compile(rf"""(["'])({"|".join(NAMES)})\1""")
    own = ROOT / "hera_volcano" / "pods" / "run.py"
    found = []
    for path in [*ROOT.joinpath("hera_volcano").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]:
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in spelled.finditer(line):
                if path == own and re.fullmatch(rf"    {match[2]}: ClassVar\[str\] = {match[0]}", line):
                    continue
                found.append(f"{path.relative_to(ROOT)}:{number}: {match[0]}")
    assert not found, "use Settings.NAME: " + ", ".join(found)
    assert len(NAMES) == 20


def test_a_quiet_follower_is_told_so_and_only_then() -> None:
    quiet = follow_logs_template(job_step("run"), quiet=True)
    env = {e.name: e.value for e in quiet.env or [] if getattr(e, "value", None) is not None}
    assert Settings.from_env(env).quiet and env[Settings.QUIET] == "true"
    loud = follow_logs_template(job_step("run"))
    assert Settings.QUIET not in {e.name for e in loud.env or []}
