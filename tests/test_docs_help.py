"""Each command's ``--help`` is true to its parser: the options its text names are options it takes, every option
it takes is described, and its examples parse (``logs`` and ``status`` said what the client no longer does)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

from hera_volcano.cli.commands import COMMANDS
from hera_volcano.cli.common import parser_of
from hera_volcano.cli.dispatch import command_main


def help_of(name: str) -> tuple[str, set[str], list[str]]:
    """The command's ``--help`` text, its option strings, and the help of each of its options."""
    parser = parser_of(command_main(name))
    options = {s for a in parser._actions for s in a.option_strings}
    described = [a.help or "" for a in parser._actions if a.option_strings]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    return out.getvalue(), options, described


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_names_only_options_the_command_takes_and_describes_each(name: str) -> None:
    text, options, described = help_of(name)
    head, _, rest = text.partition("examples:\n")
    prose = head + rest.partition("\n\n")[2]  # the examples run other commands too: checked by parsing, below
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])(?![\w-])", prose))  # not a family: --allow-...
    assert sorted(named - options) == [], f"{name} --help names options it does not take"
    assert all(d.strip() for d in described), f"{name}: an option without a description"
    for option in options:
        assert option in text, f"{name} --help does not mention {option}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_examples_parse(name: str) -> None:
    parser = parser_of(command_main(name))
    for example in COMMANDS[name].examples:
        words = shlex.split(example.split("#")[0], comments=False)
        for command in " ".join(words).split(" | "):
            argv = shlex.split(command)
            if argv[:1] != ["hera-volcano"] or argv[1:2] != [name]:
                continue
            args = argv[2:]
            if ">" in args:  # a redirection: what follows is the shell's
                args = args[: args.index(">")]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                parser.parse_args(args)


def test_logs_help_says_what_run_logs_follows_and_when_it_ends() -> None:
    """``Run.logs``: the lead task of the run's newest Volcano Job, followed as the workflow's own follower does,
    ending when the job or the workflow has finished."""
    text, _, _ = help_of("logs")
    flat = " ".join(text.split())
    assert "newest Volcano Job" in flat and "lead task" in flat and "workflow's own log follower" in flat
    assert "MPI master's (or a task's)" not in flat


def test_status_help_exit_codes_are_those_of_a_command_without_a_timeout() -> None:
    """``status`` takes no --timeout: its exit codes do not mention one, and say that a running workflow exits 0."""
    text, options, _ = help_of("status")
    assert "--timeout" not in options and "--timeout" not in text
    assert "still running" in " ".join(text.split())
