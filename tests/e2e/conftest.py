"""The end-to-end suite: what the project ships, run on a real single-node cluster (cluster/README.md).

One cluster per session, started from wiped state by cluster/e2e/node.py (Kubernetes, CoreDNS, containerd,
Volcano) and torn down at the end, the host restored. The ``cluster`` fixture is parametrised by Argo line: pytest
runs the scenarios of one line, switches the controller (and its CRDs), then runs those of the other.

Which scenario runs where (tests/e2e/README.md has the map and the reasons):
- a scenario runs on Argo 4.1 only, unless marked ``both_lines(why)``: what can differ between the lines (Argo's
  executor, the controller's substitution, the CRDs), and the smoke set that runs every bundled workflow on 3.7 too;
- ``full(why)`` marks a scenario that only measures size or load: it runs in ``make test-full``
  (``HERA_VOLCANO_TIER=full``), and not in ``make test``.
Scenarios left to another line or tier are deselected (not skipped) and counted at the end of the run.

The workflows' service account ``volcano-workflows`` is created and bound by the project's generated RBAC (`python -m
hera_volcano.rbac`) and nothing else. At the end, one line per scenario and Argo line says how it went.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, whatever pytest's import mode

from harness import Batch, Cluster, layout
from host import HostError
from node import Node
from procs import StartError
from welcome import apply_bundled_rbac

HERE = Path(__file__).resolve().parent
RESULTS: list[tuple[str, str, str, float]] = []
#: ``make test`` runs the default tier; ``make test-full`` (HERA_VOLCANO_TIER=full) the scenarios it leaves out;
#: ``all`` both (``make test-scale`` and ``make bench``, which run the scale scenarios at full size).
TIER = os.environ.get("HERA_VOLCANO_TIER", "default")
assert TIER in ("default", "full", "all"), f"HERA_VOLCANO_TIER={TIER}: expected default, full or all"
#: Scenario runs left to the other tier or line: (why, pytest's id), for the end-of-run summary.
ELSEWHERE: list[tuple[str, str]] = []
#: Each Argo line's batch submission: (line, workflows, seconds, the slowest modules' seconds): how long the
#: submission phase (rendering, `argo submit`, the modules' set-up) takes, printed at the end beside the scenarios.
SUBMISSIONS: list[tuple[str, int, float, list[tuple[str, float]]]] = []
#: The Argo lines that have a scenario to run, in order (the cluster starts on the first).
LINES: list[str] = []
#: The failing scenarios: Argo line, title, pytest's id of the test, the first lines of what it said.
FAILURES: list[tuple[str, str, str, str]] = []
#: How much of a failure's message the end-of-run summary repeats (the full message is above it, in pytest's report).
SUMMARY_LINES = 12


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: runs on the real single-node cluster of tests/e2e")
    config.addinivalue_line("markers", "scenario(title): the scenario's title in the end-of-run summary")
    config.addinivalue_line("markers", "batch: the scenario's workflow runs in a batch; leave the workflows alone")
    config.addinivalue_line("markers", "both_lines(why): runs on Argo 3.7 too (else 4.1 only): why it can differ")
    config.addinivalue_line("markers", "full(why): only measures size or load: in `make test-full`, not `make test`")


def _line(item: pytest.Item) -> str | None:
    """The Argo line a scenario runs on (its ``cluster`` parameter)."""
    line: str | None = getattr(getattr(item, "callspec", None), "params", {}).get("cluster")
    return line


def where(item: pytest.Item) -> str | None:
    """Why ``item`` runs in another tier or on another line than this run's, or None when it runs here."""
    line = _line(item)
    full = item.get_closest_marker("full")
    if TIER != "all" and (full is not None) != (TIER == "full"):
        return "make test-full (only measures)" if full is not None else "make test"
    if line is not None and line != layout.DEFAULT_ARGO_LINE and item.get_closest_marker("both_lines") is None:
        return f"Argo {layout.DEFAULT_ARGO_LINE} only"
    return None


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by Argo line
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test here `e2e`; keep the scenarios of this tier and line (see the module's docstring); within
    each Argo line, the batched scenarios come first: their workflows run together, and a scenario that runs alone
    should not run beside them."""
    mine = [item for item in items if HERE in Path(str(item.path)).resolve().parents]
    for item in mine:
        item.add_marker(pytest.mark.e2e)
        for marker in ("both_lines", "full"):
            found = item.get_closest_marker(marker)
            assert found is None or (found.args and found.args[0]), f"{item.nodeid}: {marker}(why) needs its reason"
    away = [(item, why) for item in mine if (why := where(item)) is not None]
    if away:
        gone = {id(item) for item, _ in away}
        config.hook.pytest_deselected(items=[item for item, _ in away])
        items[:] = [item for item in items if id(item) not in gone]
        ELSEWHERE.extend((why, item.nodeid) for item, why in away)
    order = {line: i for i, line in enumerate(layout.ARGO_LINES)}

    LINES[:] = sorted({line for item in items if (line := _line(item)) is not None}, key=order.__getitem__)

    def key(item: pytest.Item) -> tuple[int, int]:
        line = _line(item)
        # The scale scenarios last: they add fake nodes (removed at their end) that would change what others see.
        rank = 0 if item.get_closest_marker("batch") else 2 if Path(str(item.path)).name == "test_scale.py" else 1
        return (order.get(line, len(order)) if line else len(order), rank)

    items.sort(key=key)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        _describe_batched(item, report)
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        marker = item.get_closest_marker("scenario")
        title = marker.args[0] if marker else item.name
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "variant" in params:  # a scenario's variants are (label, ...) tuples
            title += f" ({params['variant'][0]})"
        # A batched scenario's own duration (submission to end), when it says; else the test's.
        seconds = dict(item.user_properties).get("took", report.duration)
        RESULTS.append((params.get("cluster", "?"), title, report.outcome, float(seconds)))
        if report.failed:
            FAILURES.append((params.get("cluster", "?"), title, item.nodeid, _first_lines(report)))


#: How much of a failed batched workflow's `argo logs` its report repeats (the end, where the failure is).
LOG_LINES = 40


def _describe_batched(item: pytest.Item, report: pytest.TestReport) -> None:
    """A batched scenario that failed: what each workflow it finished did (steps, messages, jobs, pods, the end of its
    logs), in its report, so that the CI log alone explains a failure whose message is only a phase."""
    batch = getattr(item, "funcargs", {}).get("batch")
    cluster = getattr(item, "funcargs", {}).get("cluster")
    if batch is None or cluster is None:
        return
    opened, batch.opened = batch.opened, []
    if not report.failed:
        return
    for name in opened:
        try:
            logs = cluster.logs(name).splitlines()[-LOG_LINES:]
        except Exception as e:  # the argo CLI failed: say so, and describe the rest
            logs = [f"argo logs {name}: {type(e).__name__}: {e}"]
        report.sections.append((f"workflow {name}", cluster.describe(name) + "\n" + "\n".join(logs)))


def _first_lines(report: pytest.TestReport) -> str:
    """The start of a failure's message (what it waited for and what it saw), for the end-of-run summary."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = text.splitlines()
    more = (
        f"\n    ... ({len(lines) - SUMMARY_LINES} more lines above, in the report)"
        if len(lines) > SUMMARY_LINES
        else ""
    )
    return "\n".join("    " + line for line in lines[:SUMMARY_LINES]) + more


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS:
        return
    terminalreporter.section("end-to-end scenarios")
    for argo, title, outcome, duration in RESULTS:
        terminalreporter.write_line(f"Argo {argo}: {title}: {outcome.upper()} ({duration:.0f} s)")
    for line, count, seconds, top in SUBMISSIONS:
        slowest = ", ".join(f"{name} {took:.0f} s" for name, took in top)
        terminalreporter.write_line(f"Argo {line}: batch of {count} workflows submitted in {seconds:.0f} s ({slowest})")
    if ELSEWHERE:
        counts: dict[str, int] = {}
        for why, _ in ELSEWHERE:
            counts[why] = counts.get(why, 0) + 1
        terminalreporter.write_line(
            f"tier {TIER}: {len(ELSEWHERE)} scenario runs left to another line or tier (tests/e2e/README.md): "
            + "; ".join(f"{n} to {why}" for why, n in sorted(counts.items()))
        )
    if FAILURES:
        # Last, so a CI log's tail says which scenarios failed and why.
        terminalreporter.section(f"failing end-to-end scenarios: {len(FAILURES)} of {len(RESULTS)}", red=True)
        for argo, title, nodeid, message in FAILURES:
            terminalreporter.write_line(f"Argo {argo}: {title}\n  {nodeid}\n{message}")


@pytest.fixture(scope="session")
def node() -> Iterator[Node]:
    started = time.monotonic()
    n = Node()
    try:
        n.up(LINES[0] if LINES else layout.DEFAULT_ARGO_LINE)
    except (HostError, StartError) as e:
        pytest.fail(f"the end-to-end cluster did not start: {e}", pytrace=False)
    up = time.monotonic() - started
    print(f"\ncluster up in {up:.0f} s", file=sys.stderr)
    stages = os.environ.get("HERA_VOLCANO_STAGES")
    if stages:  # make test's table of stages (tests/stages.py): the cluster's start apart from the scenarios
        with open(stages, "a") as f:
            f.write(f"cluster start\t{up:.1f}\n")
    yield n
    if os.environ.get("HERA_VOLCANO_KEEP_E2E") == "1":
        print(f"\nHERA_VOLCANO_KEEP_E2E=1: the cluster keeps running ({n.paths.home}); `make cluster-down`")
        return
    problems = n.down()
    assert not problems, "the host was not fully restored:\n" + "\n".join(problems)


@pytest.fixture(scope="session", params=layout.ARGO_LINES)
def cluster(node: Node, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The cluster running Argo line ``request.param``, with the service account and its generated RBAC."""
    if node.current_argo_line() != request.param:
        node.use_argo(request.param)
    c = Cluster(node)
    apply_bundled_rbac(node)  # as `make cluster-up` does: the service account and its Role
    yield c
    c.close()
    assert not c.recorder.errors, "the recorder missed events:\n" + "\n".join(c.recorder.errors)


@pytest.fixture(scope="session")
def batch(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Batch]:
    """Every batched scenario's workflow of the current Argo line, submitted at once (see harness.Batch)."""
    here = {item.originalname for item in request.session.items if _line(item) == cluster.line}  # type: ignore[attr-defined]
    b = Batch(cluster, here)
    modules = []
    for item in request.session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "submit_batch") and module not in modules:
            modules.append(module)
    # The modules whose scenarios wait longest (deadlines, start limits, back-offs) first: they end the batch.
    modules.sort(key=lambda m: -getattr(m, "BATCH_WAITS", 0))
    began = time.monotonic()
    spent: list[tuple[str, float]] = []
    for module in modules:
        start = time.monotonic()
        module.submit_batch(b, cluster)
        spent.append((module.__name__, time.monotonic() - start))
    top = sorted(spent, key=lambda m: -m[1])[:5]
    SUBMISSIONS.append((cluster.line, len(b.entries), time.monotonic() - began, top))
    yield b
    b.close()


@pytest.fixture(autouse=True)
def _clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each scenario starts with no workflows left by the previous one (their jobs and pods go with them)."""
    yield
    if "cluster" in request.fixturenames and not request.node.get_closest_marker("batch"):
        cluster = request.getfixturevalue("cluster")
        cluster.delete_workflows(keep=cluster.batched)
