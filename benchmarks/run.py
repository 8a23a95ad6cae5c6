"""The performance table of hera-volcano (``make bench``): every ratio measured side by side in one run.

Shared machines make absolute times noise, so each comparison interleaves its repetitions (alternating the order)
and reports medians; ratios are medians of per-repetition ratios, so a slow moment hits both sides of a pair.
Measurements that need a fresh interpreter run in child processes of this script (``--child ...``), with a warm
bytecode cache in a private directory (the state after ``pip install``), whatever ``PYTHONDONTWRITEBYTECODE`` says.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().with_name("RESULTS.md")

CLI_REPS = 11
IMPORT_REPS = 9
RENDER_SIZES = (100, 300, 1000, 3000)
RENDER_REPS = 5
EMIT_JOBS = 1000
EMIT_REPS = 5
LINT_FILES = 1000
LINT_REPS = 5

CLI_TARGET = 1.10
SCALING_TARGET = 11.0
EMIT_TARGET = 0.5
LINT_TARGET = 3.0
BOMB_SECONDS = 5.0
BOMB_MIB = 300
HEAVY = ("hera.workflows", "kubernetes", "argo_workflows")


# ---- the workloads (shared by the parent and the children) -----------------------------------------------------------


def pipeline(n: int, *, name: str = "job", follow_every: int = 100) -> Any:
    """A DAG of ``n`` jobs of one shape through the public API: each runs after the previous one or two."""
    import hera_volcano as hv

    jobs = []
    for i in range(n):
        after = [f"{name}-{j}" for j in (i - 1, i - 2) if j >= 0][: 1 + i % 2]
        jobs.append(
            hv.PipelineJob(
                f"{name}-{i}",
                hv.batch_job(
                    image="ghcr.io/example/trainer:1.4",
                    program=hv.Program.command(["python", "train.py", f"--shard={i}", "--lr=1e-5"]),
                    replicas=1 + i % 4,
                ),
                after=after,
                follow_logs=i % follow_every == 0,
            )
        )
    return hv.Pipeline(jobs, max_dag_tasks=None)


def same_types(a: Any, b: Any) -> bool:
    """Equality that also tells ``1`` from ``True`` and ``1.0`` (plain ``==`` does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_types(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same_types(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# ---- children -------------------------------------------------------------------------------------------------------


def child_import(module: str) -> dict[str, Any]:
    """Import time of one module in a fresh interpreter, and which heavy packages it loaded."""
    import importlib

    start = time.perf_counter()
    importlib.import_module(module)
    seconds = time.perf_counter() - start
    heavy = sorted({h for h in HEAVY for m in sys.modules if m == h or m.startswith(h + ".")})
    return {"seconds": seconds, "heavy": heavy}


def child_render(n: int, memory: bool) -> dict[str, Any]:
    """Render ``n`` jobs after a warm-up render, so one-time costs (imports, pydantic schemas) are not per job.

    Also times CPython's full (oldest-generation) garbage collections during the render: each walks every live
    object, Hera's imported models included, and how many happen depends on how many objects the render keeps alive.
    """
    import tracemalloc

    import hera_volcano as hv

    hv.to_yaml(pipeline(3).workflow("warm-up"))
    gc.collect()
    full_gc = [0.0, 0.0]  # passes, seconds
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                full_gc[0] += 1
                full_gc[1] += time.perf_counter() - started[0]

    if memory:
        tracemalloc.start()
    gc.callbacks.append(on_gc)
    start = time.perf_counter()
    wf = pipeline(n).workflow("scale")
    text = hv.to_yaml(wf)
    seconds = time.perf_counter() - start
    gc.callbacks.remove(on_gc)
    peak = tracemalloc.get_traced_memory()[1] if memory else 0
    tasks = n + len(range(0, n, 100))
    return {
        "seconds": seconds,
        "full_gc": full_gc[0],
        "full_gc_seconds": full_gc[1],
        "peak": peak,
        "bytes": len(text),
        "tasks": tasks,
    }


def child_emit() -> dict[str, Any]:
    """Our ``to_yaml`` against Hera's ``Workflow.to_yaml`` on one workflow, plus the qualities we promise."""
    import yaml
    from hera import _yaml as hera_yaml  # what Workflow.to_yaml dumps with

    import hera_volcano as hv

    wf = pipeline(EMIT_JOBS, follow_every=100).workflow("emit")
    ours_text, hera_text = hv.to_yaml(wf), wf.to_yaml()  # warm-up (first-use costs on both sides)
    times: dict[str, list[float]] = {"ours": [], "hera": [], "to_dict": []}
    runs: dict[str, Callable[[], Any]] = {"ours": lambda: hv.to_yaml(wf), "hera": wf.to_yaml, "to_dict": wf.to_dict}
    for rep in range(EMIT_REPS):
        order = list(runs) if rep % 2 == 0 else list(reversed(runs))
        for key in order:
            start = time.perf_counter()
            runs[key]()
            times[key].append(time.perf_counter() - start)
    data = wf.to_dict()
    tricky = {
        "values": ["1e-5", "08", "0x1f", "y", "no", "~", "1:30"],
        "long": " ".join(["word"] * 80),
        "script": "a\nb\n",
    }
    tricky_text = hv.to_yaml(tricky)
    hera_tricky = hera_yaml.dump(tricky)
    qualities = {
        "round trip": same_types(yaml.safe_load(ours_text), data),
        "block scalars": "- |\n" in ours_text and "script: |\n" in tricky_text,
        "no wrapping": f"long: {tricky['long']}\n" in tricky_text and same_types(yaml.safe_load(tricky_text), tricky),
        "quoted 1e-5, 08": "- '1e-5'\n" in tricky_text and "- '08'\n" in tricky_text,
    }
    hera_plain = "- 1e-5\n" in hera_tricky and "- 08\n" in hera_tricky
    return {
        "times": times,
        "tasks": len(data["spec"]["templates"][0]["dag"]["tasks"]),
        "bytes": len(ours_text),
        "hera_bytes": len(hera_text),
        "qualities": qualities,
        "hera_leaves_plain": hera_plain,
    }


def child_files(directory: str) -> dict[str, Any]:
    """Write the lint corpus: the bundled commands' outputs and variants of them, and pipelines of several sizes."""
    from hera_volcano.examples import mpi_hello
    from hera_volcano.examples.hello_jobs import DAG, STEPS
    from hera_volcano.kube.emit import to_yaml

    out = Path(directory)
    cli = {}
    for module, template in [(m, t) for m in ("mpi_hello", "steps", "dag") for t in (False, True)]:
        args = [sys.executable, "-m", f"hera_volcano.{module}", *(["--template"] if template else [])]
        text = subprocess.run(args, check=True, capture_output=True, text=True, cwd=ROOT).stdout
        cli[(module, template)] = text
        (out / f"cli-{module}{'-template' if template else ''}.yaml").write_text(text, encoding="utf-8")
    same = cli[("mpi_hello", True)] == mpi_hello.render(mpi_hello.Options(template=True)) and cli[
        ("steps", False)
    ] == to_yaml(STEPS.build())
    count = len(cli)
    i = 0
    while count < LINT_FILES:
        kind = i % 5
        namespace = ("argo", "batch", "team-a", "ml")[i % 4]
        template = i % 3 == 0
        if kind in (0, 1):
            options = mpi_hello.Options(
                namespace=namespace,
                workers=1 + i % 8,
                slots_per_worker=1 + i % 3,
                gpus_per_worker=i % 2,
                rdma_per_worker=(i // 2) % 2,
                mpi_plugin=i % 4 == 1,
                job_name=f"mpi-{i}" if i % 7 == 0 else "",
                template=template,
            )
            text = mpi_hello.render(options)
        elif kind == 2:
            bundled = STEPS if i % 2 else DAG
            text = to_yaml(bundled.build(namespace=namespace, template=template))
        else:
            p = pipeline(2 + i % 30, name=f"p{i % 3}", follow_every=4)
            text = to_yaml(p.workflow(f"pipeline-{i}", namespace=namespace, template=template, as_steps=kind == 4))
        (out / f"variant-{i:04d}.yaml").write_text(text, encoding="utf-8")
        count += 1
        i += 1
    return {"files": count, "cli_matches_library": same}


def child_lint(directory: str) -> dict[str, Any]:
    """Lint every file against parsing it with libyaml, interleaved, in an interpreter without Hera (as the CLI)."""
    files = sorted(Path(directory).glob("*.yaml"))
    start = time.perf_counter()
    from hera_volcano.tools.lint import lint_file

    lint_file(files[0])
    cold = time.perf_counter() - start
    import yaml

    def lint() -> int:
        return sum(f.severity == "error" for path in files for f in lint_file(path))

    def parse() -> int:
        return sum(yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) is not None for path in files)

    errors = lint()
    parse()
    times: dict[str, list[float]] = {"lint": [], "parse": []}
    runs: dict[str, Callable[[], int]] = {"lint": lint, "parse": parse}
    for rep in range(LINT_REPS):
        for key in list(runs) if rep % 2 == 0 else list(reversed(runs)):
            start = time.perf_counter()
            runs[key]()
            times[key].append(time.perf_counter() - start)
    heavy = sorted({h for h in HEAVY for m in sys.modules if m == h or m.startswith(h + ".")})
    return {"files": len(files), "errors": errors, "times": times, "heavy": heavy, "cold": cold}


def child(argv: Sequence[str]) -> None:
    kind, *rest = argv
    if kind == "import":
        result = child_import(rest[0])
    elif kind == "render":
        result = child_render(int(rest[0]), rest[1:] == ["memory"])
    elif kind == "emit":
        result = child_emit()
    elif kind == "files":
        result = child_files(rest[0])
    elif kind == "lint":
        result = child_lint(rest[0])
    elif kind == "bomb":
        result = child_bomb(rest[0])
    else:
        raise SystemExit(f"unknown child {kind!r}")
    sys.stdout.write(json.dumps(result) + "\n")


# ---- the parent -----------------------------------------------------------------------------------------------------


class Runner:
    """Runs children and commands with one environment: a warm, private bytecode cache."""

    def __init__(self, cache: str) -> None:
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPYCACHEPREFIX"] = cache

    def wall(self, args: Sequence[str]) -> float:
        start = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=self.env, cwd=ROOT)
        return time.perf_counter() - start

    def child(self, *args: str) -> Any:
        out = subprocess.run(
            [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True, env=self.env
        ).stdout
        return json.loads(out.splitlines()[-1])


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def paired(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of per-repetition ratios a/b."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**FAIL**"


def machine() -> list[str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or cpu
    import yaml

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    libyaml = "libyaml" if hasattr(yaml, "CSafeDumper") else "no libyaml"
    return [
        f"Machine: {cpu}, {cores} cores available ({os.cpu_count()} online), {platform.system()} {platform.release()}",
        f"Python {platform.python_version()} ({platform.python_implementation()}), PyYAML {yaml.__version__} "
        f"({libyaml}), {time.strftime('%Y-%m-%d %H:%M %Z')}",
    ]


def bench_cli(r: Runner) -> list[list[str]]:
    py = sys.executable
    commands = {
        "cli": [py, "-m", "hera_volcano.mpi_hello"],
        "hera": [py, "-c", "import hera.workflows"],
        "pass": [py, "-c", "pass"],
    }
    for args in commands.values():
        r.wall(args)  # fills the bytecode cache
    times: dict[str, list[float]] = {k: [] for k in commands}
    for rep in range(CLI_REPS):
        for key in list(commands) if rep % 2 == 0 else list(reversed(commands)):
            times[key].append(r.wall(commands[key]))
    ratio = paired(times["cli"], times["hera"])
    cli, hera, bare = (median(times[k]) for k in commands)
    return [
        [
            "1",
            "CLI wall time: `python -m hera_volcano.mpi_hello` vs `python -c 'import hera.workflows'` "
            f"(floor) vs `python -c pass` ({CLI_REPS} reps)",
            f"{cli:.3f} s vs {hera:.3f} s vs {bare:.3f} s: **{ratio:.2f}x** the floor (+{(cli - hera) * 1000:.0f} ms)",
            f"<= {CLI_TARGET:.2f}x",
            verdict(ratio <= CLI_TARGET),
        ]
    ]


def bench_import(r: Runner) -> list[list[str]]:
    r.child("import", "hera_volcano")
    ours: list[float] = []
    base: list[float] = []
    heavy: set[str] = set()
    for rep in range(IMPORT_REPS):
        for module in ("hera_volcano", "yaml") if rep % 2 == 0 else ("yaml", "hera_volcano"):
            result = r.child("import", module)
            if module == "hera_volcano":
                ours.append(result["seconds"])
                heavy.update(result["heavy"])
            else:
                base.append(result["seconds"])
    loaded = ", ".join(sorted(heavy)) or "none"
    return [
        [
            "2",
            "`import hera_volcano`: heavy modules loaded (of hera.workflows, kubernetes, argo_workflows); "
            "import time vs `import yaml`",
            f"loaded: {loaded}; {median(ours) * 1000:.1f} ms vs {median(base) * 1000:.1f} ms "
            f"({paired(ours, base):.2f}x)",
            "none loaded",
            verdict(not heavy),
        ]
    ]


def bench_render(r: Runner) -> list[list[str]]:
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in RENDER_SIZES}
    info: dict[int, Any] = {}
    for n in RENDER_SIZES:
        info[n] = r.child("render", str(n), "memory")
    for rep in range(RENDER_REPS):
        for n in RENDER_SIZES if rep % 2 == 0 else tuple(reversed(RENDER_SIZES)):
            runs[n].append(r.child("render", str(n)))
    rows = []
    for n in RENDER_SIZES:
        t = median([x["seconds"] for x in runs[n]])
        gc_passes = median([x["full_gc"] for x in runs[n]])
        gc_seconds = median([x["full_gc_seconds"] for x in runs[n]])
        rows.append(
            [
                "3",
                f"Render a DAG of {n} jobs (+{info[n]['tasks'] - n} log follower tasks): `Pipeline(...).workflow()` + "
                "`to_yaml`",
                f"{t:.3f} s ({t / n * 1000:.2f} ms/job; {gc_passes:.0f} full GC passes, {gc_seconds:.3f} s), "
                f"peak {info[n]['peak'] / 2**20:.1f} MiB ({info[n]['peak'] / n / 1024:.0f} KiB/job), "
                f"{info[n]['bytes'] / 1e6:.2f} MB of YAML",
                "linear",
                "",
            ]
        )
    small, large = RENDER_SIZES[1], RENDER_SIZES[-1]
    wall = [x["seconds"] for x in runs[large]], [x["seconds"] for x in runs[small]]
    work = (
        [x["seconds"] - x["full_gc_seconds"] for x in runs[large]],
        [x["seconds"] - x["full_gc_seconds"] for x in runs[small]],
    )
    ratio, work_ratio = paired(*wall), paired(*work)
    memory = info[large]["peak"] / info[small]["peak"]
    rows.append(
        [
            "3",
            f"Render scaling: {large} jobs vs {small} jobs ({large // small}x the jobs), wall time",
            f"**{ratio:.1f}x** the time; peak memory {memory:.1f}x",
            f"<= {SCALING_TARGET:.0f}x",
            verdict(ratio <= SCALING_TARGET),
        ]
    )
    rows.append(
        [
            "3",
            "Render scaling without CPython's full GC passes (time inside them subtracted): each walks every live "
            "object (Hera's imported models, the jobs being rendered) and they start only once the heap has grown "
            "by a quarter since the last one",
            f"**{work_ratio:.1f}x** the time",
            f"<= {SCALING_TARGET:.0f}x",
            verdict(work_ratio <= SCALING_TARGET),
        ]
    )
    return rows


def bench_emit(r: Runner) -> list[list[str]]:
    result = r.child("emit")
    times = result["times"]
    ratio = paired(times["ours"], times["hera"])
    ours, hera, to_dict = (median(times[k]) for k in ("ours", "hera", "to_dict"))
    qualities = result["qualities"]
    good = all(qualities.values())
    listed = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in qualities.items())
    hera_note = "Hera leaves 1e-5 and 08 plain" if result["hera_leaves_plain"] else "Hera quotes 1e-5 and 08 too"
    return [
        [
            "4",
            f"YAML: `hera_volcano.to_yaml(wf)` vs Hera's `wf.to_yaml()`, {result['tasks']} DAG tasks "
            f"({EMIT_REPS} reps)",
            f"{ours:.3f} s vs {hera:.3f} s: **{ratio:.2f}x** (both include `wf.to_dict()`: {to_dict:.3f} s)",
            f"<= {EMIT_TARGET}x",
            verdict(ratio <= EMIT_TARGET),
        ],
        ["4", "YAML qualities of our output", f"{listed} ({hera_note})", "all yes", verdict(good)],
    ]


def bench_lint(r: Runner) -> list[list[str]]:
    with tempfile.TemporaryDirectory(prefix="hera-volcano-lint-") as directory:
        made = r.child("files", directory)
        result = r.child("lint", directory)
    times = result["times"]
    n = result["files"]
    ratio = paired(times["lint"], times["parse"])
    lint, parse = median(times["lint"]), median(times["parse"])
    notes = [f"{result['errors']} error findings"]
    if not made["cli_matches_library"]:
        notes.append("CLI output differs from the library's")
    cold = f"cold start (import + first file) {result['cold']:.2f} s"
    if result["heavy"]:
        cold += ", loads " + ", ".join(result["heavy"])
    notes.append(cold)
    return [
        [
            "5",
            f"Lint {n} rendered workflow files (`hera_volcano.tools.lint.lint_file`) vs "
            f"`yaml.load(text, Loader=yaml.CSafeLoader)` ({LINT_REPS} reps)",
            f"{n / lint:,.0f} files/s vs {n / parse:,.0f} files/s: **{ratio:.2f}x** the parse time "
            f"({'; '.join(notes)})",
            f"<= {LINT_TARGET:.0f}x",
            verdict(ratio <= LINT_TARGET and result["errors"] == 0),
        ]
    ]


def _measured(args: Sequence[str], env: dict[str, str]) -> tuple[float, float, int, str, str]:
    """Wall time, peak RSS (MiB) and exit code of one command (``wait4``: its own rusage, not all children's)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(args, stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return seconds, usage.ru_maxrss / 1024, process.returncode, out.read().decode(), err.read().decode()


def child_bomb(path: str) -> dict[str, Any]:
    """``lint_file`` of one file in a fresh interpreter: its own time, and the process's peak RSS after it."""
    import resource

    from hera_volcano.tools.lint import lint_file

    start = time.perf_counter()
    found = lint_file(path)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "findings": len(found), "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def bench_bombs(r: Runner) -> list[list[str]]:
    """``hera-volcano lint`` (and ``submit --dry-run``) on the hostile files of ``tests/bombs.py`` and the inputs that
    crashed them (``tests/tools/test_lint_crashes.py``), beside lint on a bundled workflow: the whole command's time
    and peak RSS, ``lint_file``'s own time, the lines it printed."""
    sys.path.insert(0, str(ROOT))
    from tests.bombs import BOMBS
    from tests.tools.test_lint_crashes import CRASHES

    cli = [sys.executable, "-m", "hera_volcano"]
    bundled = ROOT / "workflows" / "volcano-mpi-hello.yaml"
    _measured([*cli, "lint", str(bundled)], r.env)  # fills the bytecode cache
    rows = []
    with tempfile.TemporaryDirectory(prefix="hera-volcano-bombs-") as directory:
        files = {"bundled volcano-mpi-hello.yaml": bundled}
        texts = {f"bomb {k}": f() for k, f in BOMBS.items()}
        texts.update({f"crash {k}": t for k, t in CRASHES.items() if t not in texts.values()})
        for name, text in texts.items():
            files[name] = Path(directory, name.replace(" ", "-") + ".yaml")
            files[name].write_text(text, encoding="utf-8", errors="surrogatepass")
        runs = [("lint", name, path) for name, path in files.items()]
        runs.append(("submit --dry-run", "bomb string-alias", files["bomb string-alias"]))
        for command, name, path in runs:
            seconds, mib, code, out, err = _measured([*cli, *command.split(), str(path)], r.env)
            lines = len(out.splitlines()) if command == "lint" else len(err.splitlines())
            own = f"; `lint_file` {r.child('bomb', str(path))['seconds']:.2f} s" if command == "lint" else ""
            refused = "expand this YAML past" in out + err
            ok = seconds < BOMB_SECONDS and mib < BOMB_MIB and "Traceback" not in err
            string = name.startswith("bomb string")
            printed = f"{lines} line{'s' if lines != 1 else ''}" + (" (refused: past the budget)" if refused else "")
            rows.append(
                [
                    "7",
                    f"`{command}` {name} ({path.stat().st_size / 1000:,.0f} KB)",
                    f"{seconds:.2f} s, peak RSS {mib:.0f} MiB{own}; exit {code}, {printed}",
                    f"< {BOMB_SECONDS:.0f} s, < {BOMB_MIB} MiB" + (", one line" if string else ""),
                    verdict(ok and (not string or (lines == 1 and refused))),
                ]
            )
    return rows


#: Issue 33's targets for the rendered bundled workflows, in KB (1000 bytes).
SIZE_TARGETS = {"mpi_hello": 12, "pytorch_hello": 12, "data_pipeline": 24}


def bench_sizes(r: Runner) -> list[list[str]]:
    """The rendered workflows' sizes; the follower's program is not in them but in a ConfigMap, once per namespace."""
    import importlib

    from hera_volcano.kube.emit import to_yaml
    from hera_volcano.pods.program import config_map

    installed = len(to_yaml(config_map("argo")).encode())
    rows = []
    for name, target in SIZE_TARGETS.items():
        size = len(importlib.import_module(f"hera_volcano.examples.{name}").render().encode())
        rows.append(
            [
                "6",
                f"Size of the rendered `{name}` Workflow (YAML bytes)",
                f"{size / 1000:.1f} KB (the follower's program: {installed / 1000:.1f} KB once per namespace, in the"
                " ConfigMap `hera-volcano rbac` renders)",
                f"<= {target} KB",
                verdict(size <= target * 1000),
            ]
        )
    return rows


def table(rows: list[list[str]]) -> list[str]:
    head = ["#", "Benchmark", "Measured (medians)", "Target", "Result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    p.add_argument("--no-save", action="store_true", help=f"do not write {RESULTS.name}")
    args = p.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    header = machine()
    for line in header:
        print(line, flush=True)
    started = time.perf_counter()
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="hera-volcano-pycache-") as cache:
        r = Runner(cache)
        for bench in (bench_cli, bench_import, bench_render, bench_emit, bench_lint, bench_sizes, bench_bombs):
            rows += bench(r)
            print(f"  {bench.__name__} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    lines = [*header, f"Total benchmark time {time.perf_counter() - started:.0f} s.", "", *table(rows)]
    print("\n" + "\n".join(lines[len(header) :]))
    if not args.no_save:
        RESULTS.write_text("\n".join(["# Benchmark results (`make bench`)", "", *lines]) + "\n", encoding="utf-8")
    failed = any("FAIL" in row[-1] for row in rows)
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
