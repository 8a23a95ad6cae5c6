"""The end-to-end suite: what the project ships, run on a real single-node cluster (cluster/README.md).

One cluster per session, started from wiped state by cluster/e2e/node.py (Kubernetes, CoreDNS, containerd,
Volcano) and torn down at the end, the host restored. The ``cluster`` fixture is parametrised by Argo line: pytest
runs every scenario on one line, switches the controller (and its CRDs), then runs them all on the other.

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
#: The failing scenarios: Argo line, title, pytest's id of the test, the first lines of what it said.
FAILURES: list[tuple[str, str, str, str]] = []
#: How much of a failure's message the end-of-run summary repeats (the full message is above it, in pytest's report).
SUMMARY_LINES = 12


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: runs on the real single-node cluster of tests/e2e")
    config.addinivalue_line("markers", "scenario(title): the scenario's title in the end-of-run summary")
    config.addinivalue_line("markers", "batch: the scenario's workflow runs in a batch; leave the workflows alone")


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by Argo line
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test here `e2e`; within each Argo line, the batched scenarios come first: their workflows run
    together, and a scenario that runs alone should not run beside them."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
    order = {line: i for i, line in enumerate(layout.ARGO_LINES)}

    def key(item: pytest.Item) -> tuple[int, int]:
        line = getattr(getattr(item, "callspec", None), "params", {}).get("cluster")
        # The scale scenarios last: they add fake nodes (removed at their end) that would change what others see.
        rank = 0 if item.get_closest_marker("batch") else 2 if Path(str(item.path)).name == "test_scale.py" else 1
        return (order.get(line, len(order)), rank)

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
        n.up(layout.ARGO_LINES[0])
    except (HostError, StartError) as e:
        pytest.fail(f"the end-to-end cluster did not start: {e}", pytrace=False)
    print(f"\ncluster up in {time.monotonic() - started:.0f} s", file=sys.stderr)
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
    b = Batch(cluster)
    modules = []
    for item in request.session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "submit_batch") and module not in modules:
            modules.append(module)
    for module in modules:
        module.submit_batch(b, cluster)
    yield b
    b.close()


@pytest.fixture(autouse=True)
def _clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each scenario starts with no workflows left by the previous one (their jobs and pods go with them)."""
    yield
    if "cluster" in request.fixturenames and not request.node.get_closest_marker("batch"):
        cluster = request.getfixturevalue("cluster")
        cluster.delete_workflows(keep=cluster.batched)
