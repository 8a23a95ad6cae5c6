"""What the docs' prose claims of the code holds: each test names the sentence it holds (and checks that the page
still says it), so a change to the behaviour or to the sentence fails here until the two agree again."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hera.workflows import DAG, Workflow

import hera_volcano as hv
from hera_volcano.pods.run import Settings
from tests.doc_blocks import PAGES, ROOT, Block, blocks, fenced, run_python

DOCS = ROOT / "docs"
#: ``NAME(...)`` in an inline code span: a call the prose shows.
_CALL = re.compile(r"`(?:hv\.)?([A-Za-z_][\w.]*)\(([^`]*)\)`")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")


def says(page: Path, sentence: str) -> None:
    """The page still says ``sentence`` (line breaks and indents as spaces)."""
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert sentence in text, f"{page.relative_to(ROOT)} no longer says: {sentence}"


def prose(page: Path) -> str:
    """The page without its fenced blocks (those run in tests/test_docs.py)."""
    text = page.read_text(encoding="utf-8")
    for block in fenced(page):
        text = text.replace(block.text, "")
    return text


def top_level_keywords(arguments: str) -> list[str]:
    """The ``name=`` of a call's own arguments (not those of a call nested in it, nor inside a string)."""
    text, depth, found = _STRING.sub('""', arguments), 0, []
    for m in re.finditer(r"[()\[\]{}]|(?<![\w.=])([a-z_]\w*)=(?!=)", text):
        if m.group(0) in "([{":
            depth += 1
        elif m.group(0) in ")]}":
            depth -= 1
        elif depth == 0:
            found.append(m.group(1))
    return found


def keywords_of(function: Callable[..., object]) -> set[str] | None:
    """The keyword arguments ``function`` takes (a builder's ``**settings`` are :class:`hv.JobSettings`'s keys);
    None when it takes any."""
    names: set[str] = set()
    for p in inspect.signature(function).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            if "JobSettings" not in str(p.annotation):
                return None
            names |= set(hv.JobSettings.__annotations__)
        else:
            names.add(p.name)
    return names


def shown_calls() -> list[tuple[str, str, Callable[..., object]]]:
    """Each ``NAME(...)`` of the public API that a page's prose shows (the changelog's are history: left out)."""
    found: list[tuple[str, str, Callable[..., object]]] = []
    for page in PAGES:
        if page.name == "changelog.md":
            continue
        for m in _CALL.finditer(prose(page)):
            target: object = hv
            for part in m.group(1).split("."):
                target = getattr(target, part, None)
            if callable(target) and not isinstance(target, type(hv)):
                found.append((f"{page.relative_to(ROOT)}: {m.group(0)}", m.group(2), target))
    return found


def test_every_keyword_the_prose_gives_a_call_is_one_it_takes() -> None:
    """docs/data-pipelines.md showed ``batch_job(..., outputs=[...])``, which no builder takes: a call shown in
    prose names only keyword arguments its function has."""
    calls = shown_calls()
    assert len(calls) >= 20, "the prose shows calls of the API"
    wrong = []
    for where, arguments, function in calls:
        known = keywords_of(function)
        wrong += [f"{where}: {kw}" for kw in top_level_keywords(arguments) if known is not None and kw not in known]
    assert wrong == []


def test_top_level_keywords_are_the_calls_own() -> None:
    assert top_level_keywords('..., patience=Patience(grace=60, retry=2), x="a=b"') == ["patience", "x"]


def follower_start_seconds(text: str) -> dict[str, str]:
    """Each follower template of the rendered workflow: its ``START_SECONDS``."""
    found = {}
    for t in yaml.safe_load(text)["spec"]["templates"]:
        env = {e["name"]: e.get("value") for e in (t.get("container") or {}).get("env", [])}
        if Settings.START_SECONDS in env:
            found[t["name"]] = env[Settings.START_SECONDS]
    return found


def limited_job() -> hv.VolcanoJob:
    return hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["true"]), start_limit=600)


def test_start_limit_is_kept_by_the_follower_beside_the_job_whatever_the_wiring() -> None:
    """docs/python-api.md: "`start_limit` | seconds the gang may wait to start, kept by its follower (a day by
    default, `None` for none): `job_dag`'s, the follower built from the step (`follow_logs_template(step)`), or in a
    `Pipeline` a quiet follower task `NAME-start` beside each job that has no log follower"."""
    says(
        DOCS / "python-api.md", "`job_dag`'s, the follower built from the step (`follow_logs_template(step)`), or in a"
    )
    with Workflow(generate_name="limited-", entrypoint="main") as w:
        run = hv.job_dag(limited_job(), name="train")
        with DAG(name="main"):
            run(name="train")
    assert follower_start_seconds(hv.to_yaml(w)) == {"train-logs": "600"}
    step = hv.job_template(limited_job(), name="train")
    env = hv.follow_logs_template(step).env or []
    assert {e.name: getattr(e, "value", None) for e in env}[Settings.START_SECONDS] == "600"
    for entry in (
        hv.PipelineJob("train", limited_job(), follow_logs=True),
        hv.PipelineJob("train", limited_job(), outputs=["loss"]),
        hv.PipelineJob("train", limited_job()),
    ):
        assert list(follower_start_seconds(hv.to_yaml(hv.Pipeline([entry]).workflow("p"))).values()) == ["600"]
    default = hv.batch_job(image="busybox:1.37.0", program=hv.Program.command(["true"]))
    assert default.start_limit == 86400, "a day by default"


@pytest.mark.parametrize(
    "block", [b for b in blocks("python", "offline") if "reported" in b.text.splitlines()[0]], ids=lambda b: b.where
)
def test_an_example_that_says_its_result_is_reported_has_a_follower_that_reports_it(
    block: Block, tmp_path: Path
) -> None:
    """docs/functions.md: "a function under torchrun, its result reported": the workflow it prints has a follower
    whose outputs are the keys the function returns."""
    printed = run_python(block, tmp_path)
    returned = set(re.findall(r'"(\w+)": ', block.text.split("return {", 1)[1].split("}", 1)[0]))
    assert returned, f"{block.where}: the function returns a dict"
    reported = {
        o["name"]
        for doc in yaml.safe_load_all(printed)
        for t in doc["spec"]["templates"]
        if Settings.OUTPUTS in {e["name"] for e in (t.get("container") or {}).get("env", [])}
        for o in t.get("outputs", {}).get("parameters", [])
    }
    assert returned <= reported, f"{block.where}: {sorted(returned - reported)} reported by no follower"


SWEEPS = DOCS / "patterns" / "sweeps.md"


@pytest.mark.parametrize("loop", ["withItems", "withParam"])
def test_the_sweeps_page_sweeps_job_dag_trials_and_a_later_step_reads_the_best(loop: str, tmp_path: Path) -> None:
    """docs/patterns/sweeps.md: each example's ``hv.sweep`` loops the job's ``job_dag`` (``NAME-trial``, its own job
    and follower) and then its pick, whose outputs are the sweep's; the grid's later step reads ``best-loss`` and
    ``best-params``; a typo is refused as the page quotes it."""
    says(SWEEPS, "each trial is the job's [`job_dag`](../api/templates.md) (its own Volcano Job in the job's queue")
    examples = [b for b in fenced(SWEEPS) if b.info == ("python", "offline") and "hv.sweep(" in b.text]
    assert len(examples) == 2
    found = 0
    for block in examples:
        [doc] = [d for d in yaml.safe_load_all(run_python(block, tmp_path)) if d]
        by_name = {t["name"]: t for t in doc["spec"]["templates"]}
        sweep = by_name["tune"]
        trials, pick = sweep["dag"]["tasks"]
        if loop not in trials:
            continue
        found += 1
        assert {t["template"] for t in by_name[trials["template"]]["dag"]["tasks"]} == {
            "tune-trial-job",
            "tune-trial-logs",
        }
        assert pick["template"] == "tune-pick" and "trials.Failed" in pick["depends"]
        outputs = {p["name"] for p in sweep["outputs"]["parameters"]}
        assert {"trials", "best-params", "best-trial"} <= outputs
        readers = [
            a["value"]
            for t in by_name["main"]["dag"]["tasks"]
            for a in (t.get("arguments") or {}).get("parameters", [])
        ]
        if loop == "withItems":
            assert sweep["parallelism"] == 2 and "best-accuracy" in outputs
            assert "{{tasks.tune.outputs.parameters.best-loss}}" in readers, block.where
            assert "{{tasks.tune.outputs.parameters.best-params}}" in readers, block.where
        else:
            assert "{{tasks.grid.outputs.result}}" in readers, block.where
    assert found == 1, f"one {loop} example"
    from hera.workflows import Workflow

    import hera_volcano as hv

    job = hv.batch_job(
        image="python:3.12-slim",
        program=hv.Program.command(["echo", hv.Placeholder.input("lr", 0.1), hv.Placeholder.input("batch", 32)]),
    )
    with Workflow(name="w"), pytest.raises(hv.ValidationError) as refused:
        hv.sweep(job, hv.Grid({"lrr": [0.1]}), name="tune", objective="loss")
    says(SWEEPS, f"a typo is refused when the sweep is built (`{refused.value}`)")


def test_the_sweeps_page_runs_a_sweep_in_a_pipeline_between_prep_and_evaluate(tmp_path: Path) -> None:
    """docs/patterns/sweeps.md, in a pipeline: the sweep entry is one task after prep, calling the shared sweep
    templates, and evaluate reads its best trial; the typos are refused as the page quotes them."""
    [block] = [b for b in fenced(SWEEPS) if b.info == ("python", "offline") and "hv.PipelineSweep(" in b.text]
    [doc] = [d for d in yaml.safe_load_all(run_python(block, tmp_path)) if d]
    by_name = {t["name"]: t for t in doc["spec"]["templates"]}
    calls = {t["name"]: t for t in by_name["tune"]["dag"]["tasks"]}
    assert calls["tune"]["depends"] == "prep" and calls["evaluate"]["depends"] == "tune"
    sweep = by_name[calls["tune"]["template"]]
    assert sweep["name"].startswith("sweep-") and sweep["parallelism"] == 2
    assert len(sweep["dag"]["tasks"][0]["withItems"]) == 4
    read = {a["value"] for a in calls["evaluate"]["arguments"]["parameters"]}
    assert read == {"{{tasks.tune.outputs.parameters.best-params}}", "{{tasks.tune.outputs.parameters.best-loss}}"}
    job = hv.batch_job(image="python:3.12-slim", program=hv.Program.command(["echo", hv.Placeholder.input("lr", 1)]))
    prep = hv.PipelineStep("prep", _container("prep"))
    for after, read_as in ((["prepp"], "best-loss"), (["prep"], "best-los")):
        entries = [
            prep,
            hv.PipelineSweep("tune", job, hv.Grid({"lr": [1]}), objective="loss", after=after),
            hv.PipelineStep(
                "evaluate", _container("evaluate", "loss"), arguments={"loss": hv.StepOutput("tune", read_as)}
            ),
        ]
        with pytest.raises(hv.ValidationError) as refused:
            hv.Pipeline(entries)
        says(SWEEPS, f"(`{str(refused.value).split(' (it gives')[0]}`)")


def _container(name: str, *inputs: str) -> object:
    from hera.workflows import Container, Parameter

    return Container(name=name, image="busybox:1.37.0", command=["true"], inputs=[Parameter(name=i) for i in inputs])


def test_job_dag_keeps_the_jobs_start_limit_and_waits_out_each_retry() -> None:
    """docs/python-api.md, which wiring to use: with `job_dag` "the follower follows its own step's job (in a loop
    too), keeps the job's `start_limit` and waits out each attempt of its `ArgoRetry`"."""
    says(DOCS / "python-api.md", "keeps the job's `start_limit` and waits out each attempt of its `ArgoRetry`")
    job = hv.batch_job(
        image="busybox:1.37.0", program=hv.Program.command(["true"]), start_limit=600, retry=hv.ArgoRetry(2)
    )
    with Workflow(generate_name="wired-", entrypoint="main") as w:
        run = hv.job_dag(job, name="train")
        with DAG(name="main"):
            run(name="train", with_items=["a", "b"])
    by_name = {t["name"]: t for t in yaml.safe_load(hv.to_yaml(w))["spec"]["templates"]}
    env = {e["name"]: e.get("value") for e in by_name["train-logs"]["container"]["env"]}
    assert (env[Settings.START_SECONDS], env[Settings.STEP_RETRIES]) == ("600", "2")
    assert by_name["train-job"]["retryStrategy"]["limit"] == 2
