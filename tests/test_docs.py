"""The README's and docs/'s examples run and show what they say; their commands parse, and those that need no cluster
run; their links lead somewhere (tests/doc_blocks.py says how blocks are marked)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from hera_volcano.cli import main as cli_main
from hera_volcano.cli.commands import COMMANDS
from hera_volcano.cli.common import UsageError, parser_of
from hera_volcano.cli.dispatch import command_main
from hera_volcano.client import failures
from hera_volcano.client.explain import explain
from hera_volcano.client.report import format_explanation
from hera_volcano.client.resources import WORKFLOWS
from hera_volcano.tools.lint import lint_text
from tests.client.recorded import error, observed
from tests.doc_blocks import PAGES, ROOT, Block, blocks, fenced, run_python

README = ROOT / "README.md"
#: What the end-to-end suite's README examples used to be: at least this many Workflow-printing examples.
MIN_WORKFLOW_EXAMPLES = 4
KNOWN_INFO = {
    ("python",),
    ("python", "offline"),
    ("python", "cluster"),
    ("python", "local"),
    ("sh",),
    ("text",),
    ("text", "output"),
    ("yaml",),
}


def lint_clean(text: str, where: str) -> None:
    """The project's lint finds nothing in ``text``: no error and no warning (a documented example is what users
    copy), and ``hera-volcano lint -`` agrees."""
    findings = lint_text(text, where)
    assert not findings, f"{where}: lint finds problems in what the example prints:\n" + "\n".join(map(str, findings))
    code, out, err = run_cli(["lint", "-"], stdin=text.encode())
    assert code == 0, f"{where}: lint found errors in what the example prints:\n{out}{err}"


def run_cli(argv: list[str], stdin: bytes = b"", cwd: Path = ROOT) -> tuple[int, str, str]:
    """``hera-volcano ARGV`` in this process, in folder ``cwd``: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    before, here = sys.stdin, Path.cwd()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
    finally:
        sys.stdin = before
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


# ---- Python examples ----------------------------------------------------------------------------------------------


def test_every_block_is_marked_as_the_tests_know() -> None:
    for page in PAGES:
        for block in fenced(page):
            info = block.info
            known = (
                info in KNOWN_INFO
                or (len(info) == 2 and info[0] == "yaml" and info[1].startswith("file="))
                or (len(info) == 2 and info[0] == "text" and info[1].split("=")[0] in ("explain", "submit-error"))
            )
            assert known, f"{block.where}: a block marked {' '.join(info) or '(nothing)'}: see tests/doc_blocks.py"


def test_python_examples_run_and_print_workflows_that_lint_accepts(tmp_path: Path) -> None:
    examples = blocks("python")
    assert len(examples) >= MIN_WORKFLOW_EXAMPLES and examples[0].page == README
    for i, block in enumerate(examples):
        folder = tmp_path / str(i)
        folder.mkdir()
        printed = run_python(block, folder)
        docs = [d for d in yaml.safe_load_all(printed) if d]
        assert docs and all(d["kind"] == "Workflow" for d in docs), block.where
        built = block.text.count("Workflow(") + block.text.count(".workflow(")
        assert len(docs) == built, f"{block.where}: one document per workflow built"
        lint_clean(printed, block.where)


def test_offline_examples_run_and_print_objects_that_lint_accepts(tmp_path: Path) -> None:
    examples = blocks("python", "offline")
    assert len(examples) >= 4
    for i, block in enumerate(examples):
        folder = tmp_path / str(i)
        folder.mkdir()
        printed = run_python(block, folder)
        docs = [d for d in yaml.safe_load_all(printed) if d]
        assert docs and all(d.get("apiVersion") and d.get("kind") for d in docs), block.where
        lint_clean(printed, block.where)


def test_cluster_examples_compile_and_are_left_to_the_end_to_end_suite() -> None:
    """The examples that talk to a cluster: tests/e2e/test_client.py runs them; here they must compile."""
    cluster = blocks("python", "cluster")
    assert len(cluster) >= 2
    for block in cluster:
        compile(block.text, block.where, "exec")
        assert "hv.Client(" in block.text, block.where


def test_local_examples_run_here_and_print_what_the_page_shows(tmp_path: Path) -> None:
    """The examples that run a job on this machine (``hv.run_local``) print what the ``text output`` after them
    shows."""
    found = 0
    for page in PAGES:
        page_blocks = fenced(page)
        for i, block in enumerate(page_blocks):
            if block.info != ("python", "local"):
                continue
            shown = page_blocks[i + 1] if i + 1 < len(page_blocks) else None
            assert shown is not None and shown.info == ("text", "output"), f"{block.where}: no text output after it"
            folder = tmp_path / str(found)
            folder.mkdir()
            assert run_python(block, folder) == shown.text, block.where
            found += 1
    assert found >= 1


# ---- shell commands -----------------------------------------------------------------------------------------------

#: What a command substitution stands for when it is not run (a workflow's generated name).
SAMPLE_NAME = "volcano-mpi-hello-x7k2p"
#: ``python -m hera_volcano.X``: the command each module runs (read from the module itself).
MODULES = {
    path.stem: m.group(1)
    for path in (ROOT / "hera_volcano").glob("*.py")
    if (m := re.search(r'main\(\["([a-z-]+)"', path.read_text()))
}
#: Commands that need no cluster, run for real.
OFFLINE = {"mpi-hello", "pytorch-hello", "data-pipeline", "steps", "dag", "rbac", "lint", "render", "completion"}


@dataclass
class Substitution:
    """``<(...)`` or ``$(...)``: the commands inside."""

    kind: str
    pipelines: list[list[Command]]


@dataclass
class Command:
    words: list[str | Substitution]
    prefix: list[str] = field(default_factory=list)  # VAR=... assignments before it


def tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def parse(words: Iterator[str], closing: str | None = None) -> list[list[Command]]:
    """Pipelines (lists of commands joined by ``|``) of a token stream, up to ``closing``."""
    pipelines: list[list[Command]] = [[Command([])]]
    for word in words:
        current = pipelines[-1][-1]
        if word == closing:
            break
        if word == "|":
            pipelines[-1].append(Command([]))
        elif word in ("&&", "||", ";"):
            pipelines.append([Command([])])
        elif word in (">", ">>"):
            if current.words and isinstance(current.words[-1], str) and current.words[-1].isdigit():
                current.words.pop()  # 2> FILE: a file descriptor, not an argument
            next(words)
        elif word == "<(":
            current.words.append(Substitution("<(", parse(words, ")")))
        elif word == "(" and not current.words and current.prefix and current.prefix[-1].endswith("=$"):
            # VAR=$(...): the variable stands for what the commands print
            current.prefix[-1] = current.prefix[-1].removesuffix("$")
            current.words.append(Substitution("$(", parse(words, ")")))
        elif word == "(" and current.words and current.words[-1] == "$":
            current.words[-1] = Substitution("$(", parse(words, ")"))
        else:
            assert not set(word) <= set("()<>&;|"), f"a shell construct the tests do not read: {word!r}"
            if not current.words and re.fullmatch(r"[A-Za-z_]\w*=.*", word):
                current.prefix.append(word)
            else:
                current.words.append(word)
    return [[c for c in p if c.words or c.prefix] for p in pipelines]


def ours(command: Command) -> list[str | Substitution] | None:
    """``hera-volcano ARGS`` or ``python -m hera_volcano[.MODULE] ARGS`` as ``[COMMAND, ARGS...]``, else None."""
    words = command.words
    if words[:1] == ["hera-volcano"]:
        return words[1:]
    if len(words) >= 3 and words[0] in ("python", "python3") and words[1] == "-m":
        module = words[2]
        if module == "hera_volcano":
            return words[3:]
        if isinstance(module, str) and module.startswith("hera_volcano."):
            name = module.removeprefix("hera_volcano.")
            assert name in MODULES, f"python -m {module} is no command"
            return [MODULES[name], *words[3:]]
    return None


@dataclass
class Shell:
    """Runs the commands of one page's ``sh`` blocks: ours parse, and those that need no cluster run in ``folder``."""

    folder: Path
    where: str = ""
    checked: list[str] = field(default_factory=list)
    ran: list[tuple[list[str], str]] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)

    def block(self, block: Block) -> None:
        self.where = block.where
        text = re.sub(r"\\\n", " ", block.text)
        for line in text.splitlines():
            for pipeline in parse(iter(tokens(line))):
                self.pipeline(pipeline)

    def pipeline(self, pipeline: list[Command]) -> str | None:
        """Check each command, run what can run; the last command's output when every command ran."""
        stdin: str | None = ""
        for command in pipeline:
            stdin = self.command(command, stdin)
        return stdin

    def command(self, command: Command, stdin: str | None) -> str | None:
        words: list[str] = []
        runnable = True
        for word in command.words:
            if isinstance(word, Substitution):
                outputs = [self.pipeline(p) for p in word.pipelines]
                out = outputs[-1] if outputs else None
                if word.kind == "<(":
                    path = self.folder / f"substituted-{len(self.ran)}.yaml"
                    if out is not None:
                        path.write_text(out)
                    runnable &= out is not None
                    words.append(str(path))
                else:
                    words.append(SAMPLE_NAME)
            else:
                words.append(self.expand(word))
        for assignment in command.prefix:
            self.variables[assignment.split("=", 1)[0]] = SAMPLE_NAME
        argv = ours(Command(list(words)))
        if argv is None:
            return None
        args = [str(a) for a in argv]
        self.checked.append(shlex.join(args))
        self.parses(args)
        if not (runnable and self.offline(args, stdin)):
            return None
        code, out, err = run_cli(args, (stdin or "").encode(), self.folder)
        expected = (0, 1) if args[:1] == ["lint"] else (0,)
        assert code in expected and "Traceback" not in err, f"{self.where}: hera-volcano {shlex.join(args)}: {err}"
        self.ran.append((args, out))
        return out

    def expand(self, word: str) -> str:
        def value(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            assert name in self.variables, f"{self.where}: ${name} is set by no command before it"
            return self.variables[name]

        return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, word)

    def parses(self, args: list[str]) -> None:
        if args in (["--version"], ["--help"], ["-h"]):
            return
        assert args and args[0] in COMMANDS, f"{self.where}: hera-volcano {shlex.join(args)}: no such command"
        parser = parser_of(command_main(args[0]))
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(args[1:])
        except UsageError as e:
            pytest.fail(f"{self.where}: hera-volcano {shlex.join(args)}: {e}")
        except SystemExit as e:  # --help
            assert e.code == 0, f"{self.where}: hera-volcano {shlex.join(args)}"

    def offline(self, args: list[str], stdin: str | None) -> bool:
        """Whether the command needs no cluster and has what it reads: its files, or the output it is piped."""
        if args in (["--version"], ["--help"]):
            return True
        if args[0] not in OFFLINE or "--help" in args:
            return False
        if args[0] == "render":
            return "--bundled" in args and "--check" in args
        if args[0] == "lint" and "--server" in args:  # asks a cluster's API server
            return False
        if args[0] in ("lint", "rbac"):
            parser = parser_of(command_main(args[0]))
            namespace = parser.parse_args(args[1:])
            positional = [a.dest for a in parser._actions if not a.option_strings]
            paths = [p for dest in positional for p in getattr(namespace, dest) or []]
            return all((p == "-" and stdin is not None) or (self.folder / p).exists() for p in paths)
        return True


def pages_with_commands() -> list[Path]:
    return [page for page in PAGES if any(b.info == ("sh",) for b in fenced(page))]


@pytest.mark.parametrize("page", pages_with_commands(), ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_parse_and_those_that_need_no_cluster_run(page: Path, tmp_path: Path) -> None:
    for name in ("workflows", "rbac"):
        (tmp_path / name).symlink_to(ROOT / name)
    page_blocks = fenced(page)
    for block in page_blocks:
        if block.info[:1] == ("yaml",) and len(block.info) == 2:
            (tmp_path / block.info[1].removeprefix("file=")).write_text(block.text)
    shell = Shell(tmp_path)
    previous: Block | None = None
    last: list[tuple[list[str], str]] = []
    for block in page_blocks:
        if block.info == ("sh",):
            start = len(shell.ran)
            shell.block(block)
            last = shell.ran[start:]
        elif block.info == ("text", "output") and not (previous and previous.info == ("python", "local")):
            assert previous is not None and previous.info == ("sh",), f"{block.where}: output follows no sh block"
            assert last, f"{block.where}: the sh block before it runs no command here"
            args, out = last[-1]
            assert out == block.text, f"{block.where}: hera-volcano {shlex.join(args)} prints:\n{out}"
        previous = block
    if page == README:
        assert len(shell.checked) >= 8 and len(shell.ran) >= 3, (shell.checked, shell.ran)


def test_the_readme_goes_from_zero_to_a_running_job_in_five_commands_rbac_first() -> None:
    text = README.read_text()
    section = text[text.index("## The first job") :]
    section = section[: section.index("\n## ", 1)]
    first = next(b for b in fenced(README) if b.info == ("sh",) and b.text in section)
    lines = [line.split("#")[0].strip() for line in first.text.splitlines()]
    commands = [line for line in lines if line]
    assert len(commands) == 5 and commands[0].startswith("pip install"), commands
    rbac = next(i for i, c in enumerate(commands) if c.startswith("hera-volcano rbac"))
    assert rbac < next(i for i, c in enumerate(commands) if "submit" in c)


def test_the_readme_names_the_two_commands_of_a_checkout_and_ci_runs_both() -> None:
    """A newcomer on a fresh clone finds, in the README, the one command that runs the main job and the one that
    passes the tests; the Makefile has them as said, and the fresh-clone check (`.ci/run`) runs both."""
    blocks_ = [b for b in fenced(README) if b.info == ("sh",)]
    [two] = [b for b in blocks_ if any(line.startswith("make run") for line in b.text.splitlines())]
    commands = [line.split("#")[0].strip() for line in two.text.splitlines()]
    assert commands == ["make run", "make test"], commands
    assert "hello world" in two.text and "make cluster-up" in two.text and "argo submit -" in two.text, two.text
    makefile = (ROOT / "Makefile").read_text()
    run = makefile[makefile.index("\nrun:") :].split("\n\n", 1)[0]
    assert "cluster/e2e/run.py" in run, run
    test = makefile[makefile.index("\ntest:") :].split("\n\n", 1)[0]
    assert "tests/stages.py" in test and "e2e-unless-skipped" in test, test
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    ran = [line for line in ci if line.startswith("make ")]
    assert [[w for w in c.split() if not w.startswith(("-", ">"))][1] for c in ran] == ["run", "test"], ran


# ---- what the docs show a command printing ------------------------------------------------------------------------


def marked(kind: str) -> list[tuple[Block, str]]:
    """``text KIND=VALUE`` blocks with their VALUE."""
    found = []
    for page in PAGES:
        for block in fenced(page):
            if block.info[:1] == ("text",) and block.info[1:2] and block.info[1].startswith(f"{kind}="):
                found.append((block, block.info[1].split("=", 1)[1]))
    return found


def test_explain_as_shown_is_what_it_prints_for_the_recorded_run() -> None:
    shown = marked("explain")
    assert shown and all(block.page.name == "troubleshooting.md" for block, _ in shown)
    for block, run in shown:
        assert block.text == format_explanation(explain(observed(run))), f"{block.where}: explain prints otherwise"


def test_submit_errors_as_shown_are_what_it_prints_for_the_recorded_answers() -> None:
    shown = marked("submit-error")
    assert shown
    for block, answer in shown:
        e = failures.from_answer(*error(answer), verb="create", resource=WORKFLOWS, namespace="argo")
        assert block.text == f"hera-volcano submit: error: {e}\n", f"{block.where}: submit prints otherwise"


# ---- links --------------------------------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings (outside fenced blocks)."""
    inside = {line for b in fenced(page) for line in range(b.line, b.line + b.text.count("\n"))}
    found = set()
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if number not in inside and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_relative_links_lead_to_files_and_headings_that_exist() -> None:
    for page in PAGES:
        text = page.read_text()
        for target in _LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.exists(), f"{page.relative_to(ROOT)}: a link to {target}, which does not exist"
            if anchor and resolved.suffix == ".md":
                assert anchor in anchors(resolved), f"{page.relative_to(ROOT)}: no heading #{anchor} in {path or 'it'}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in _LINK.findall(README.read_text())}
    assert set(PAGES[1:]) <= linked, sorted(str(p.relative_to(ROOT)) for p in set(PAGES[1:]) - linked)


# ---- the README and the site --------------------------------------------------------------------------------------

#: The README says what it is, how to install it, the first job, one example each of the API and of a data
#: pipeline, the commands and where the rest is; the rest lives in docs/ (the site).
README_MAX_LINES = 250


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/ (at most {README_MAX_LINES})"


def nav_pages(entries: object) -> list[str]:
    """The pages mkdocs.yml's nav lists, in order."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in nav_pages(value)]
    if isinstance(entries, list):
        return [page for entry in entries for page in nav_pages(entry)]
    return []


def test_the_site_lists_every_docs_page_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    assert len(listed) == len(set(listed)), "a page listed twice in mkdocs.yml's nav"
    on_disk = sorted(str(page.relative_to(ROOT / "docs")) for page in PAGES[1:])
    assert sorted(listed) == on_disk, "mkdocs.yml's nav and docs/ differ"


def test_the_api_reference_documents_every_public_name() -> None:
    """Each name of ``hera_volcano.__all__`` has its ``::: hera_volcano.NAME`` (mkdocstrings renders it from the
    docstring, so the signatures shown are the code's), and the reference names nothing else."""
    import hera_volcano

    documented = [
        m.group(1)
        for page in sorted((ROOT / "docs" / "api").glob("*.md"))
        for m in re.finditer(r"^::: hera_volcano\.(\w+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert len(documented) == len(set(documented)), "a name documented twice"
    assert sorted(documented) == sorted(hera_volcano.__all__)


@pytest.mark.parametrize("page", [README, ROOT / "docs" / "cli.md"], ids=lambda p: p.name)
def test_the_command_tables_name_every_command(page: Path) -> None:
    """The README's table of commands and docs/cli.md's table of groups name each command of ``hera-volcano``."""
    rows = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    named = {word for row in rows for word in re.findall(r"`([a-z][a-z-]*)[` ]", row)}
    assert sorted(set(COMMANDS) - named) == [], f"{page.name}: commands missing from its tables"
