"""``hera-volcano`` itself: ``--help`` lists every command with what it does, ``--version``, each command's help ends
with examples and exit codes, an unknown command is one line."""

from __future__ import annotations

import re

import pytest

import hera_volcano
from hera_volcano.cli.commands import COMMANDS, EXIT_CODES
from tests.commands import run


def test_help_lists_every_command_with_its_summary() -> None:
    r = run("hera_volcano", "--help")
    assert (r.code, r.err) == (0, ""), r
    lines = r.out.splitlines()
    for name, command in COMMANDS.items():
        [line] = [line for line in lines if line.split()[:1] == [name]]
        assert line.split(maxsplit=1)[1] == command.summary
    assert "lint" in COMMANDS and "completion" in COMMANDS
    for code in ("0", "1", "2", "3", "4"):
        assert any(line.split()[:1] == [code] for line in lines), f"exit code {code} is explained"
    assert run("hera_volcano", "-h").out == r.out


def test_version_is_the_package_version() -> None:
    r = run("hera_volcano", "--version")
    assert (r.code, r.out, r.err) == (0, f"hera-volcano {hera_volcano.__version__}\n", "")


def test_version_with_an_argument_is_a_one_line_usage_error() -> None:
    r = run("hera_volcano", "--version", "extra")
    assert (r.code, r.out, r.err) == (2, "", "hera-volcano: error: --version takes no arguments (got 'extra')\n")


def test_no_command_and_an_unknown_command_are_one_line_usage_errors() -> None:
    none = run("hera_volcano")
    assert (none.code, none.out) == (2, "") and len(none.err.splitlines()) == 1
    typo = run("hera_volcano", "sumbit")
    assert (typo.code, typo.out) == (2, "")
    assert typo.err == "hera-volcano: error: unknown command 'sumbit' (did you mean submit?)\n"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_has_help_with_examples_and_exit_codes(name: str) -> None:
    r = run("hera_volcano", name, "--help")
    assert (r.code, r.err) == (0, ""), r
    assert r.out.startswith(f"usage: hera-volcano {name} ")
    command = COMMANDS[name]
    examples = r.out.split("examples:\n", 1)[1]
    assert command.examples and all(f"  {example}\n" in examples for example in command.examples)
    assert EXIT_CODES[command.exits] in r.out
    cluster = command.group == "cluster"
    takes_namespace = ("mpi-hello", "pytorch-hello", "data-pipeline", "steps", "dag", "rbac", "render", "lint")
    assert ("-n NAMESPACE, --namespace NAMESPACE" in r.out) == (cluster or name in takes_namespace)
    assert ("$ARGO_NAMESPACE" in r.out) == (cluster or name == "lint")  # lint --server asks a cluster


def test_every_example_runs_a_command_that_exists() -> None:
    for name, command in COMMANDS.items():
        for example in command.examples:
            used = re.findall(r"hera-volcano (\S+)", example)
            assert used and all(u in COMMANDS for u in used), (name, example)
