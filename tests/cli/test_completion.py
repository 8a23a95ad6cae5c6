"""``hera-volcano completion bash|zsh``: scripts made from the commands' own parsers. The bash script is run by bash
(its function called as bash's completion calls it, no bash-completion package needed); the zsh script is parsed
and loaded by zsh (`make unit` installs Debian's zsh)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hera_volcano.cli.commands import COMMANDS
from hera_volcano.cli.common import parser_of
from hera_volcano.cli.dispatch import command_main
from tests.commands import run


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = run("hera_volcano", "completion", "bash")
    assert (r.code, r.err) == (0, ""), r
    path = tmp_path_factory.mktemp("completion") / "hera-volcano.bash"
    path.write_text(r.out)
    return path


def complete(script: Path, *words: str, cwd: Path | None = None) -> list[str]:
    """What bash offers for the last of ``words`` (the command line so far, ``hera-volcano`` first)."""
    program = (
        'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _hera_volcano;'
        ' printf "%s\\n" "${COMPREPLY[@]}"'
    )
    p = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program, "bash", str(script), *words],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    assert (p.returncode, p.stderr) == (0, ""), p
    return [line for line in p.stdout.splitlines() if line]


def test_bash_completes_commands_and_top_level_options(bash_script: Path) -> None:
    assert complete(bash_script, "hera-volcano", "s") == ["steps", "submit", "status", "stop"]
    assert complete(bash_script, "hera-volcano", "--v") == ["--version"]
    assert set(complete(bash_script, "hera-volcano", "")) == {*COMMANDS, "--help", "--version"}


def test_bash_completes_options_and_their_values(bash_script: Path) -> None:
    assert complete(bash_script, "hera-volcano", "mpi-hello", "--output") == ["--output", "--output-file"]
    assert complete(bash_script, "hera-volcano", "mpi-hello", "-o", "") == ["yaml", "json"]
    assert complete(bash_script, "hera-volcano", "status", "wf", "-o", "") == ["name", "yaml", "json"]
    assert complete(bash_script, "hera-volcano", "lint", "--format", "j") == ["json"]
    assert complete(bash_script, "hera-volcano", "completion", "") == ["bash", "zsh"]
    assert complete(bash_script, "hera-volcano", "submit", "--dry") == ["--dry-run"]
    assert complete(bash_script, "hera-volcano", "submit", "-n", "") == [], "a namespace cannot be guessed"


def test_bash_completes_files_and_folders_where_they_are_expected(bash_script: Path, tmp_path: Path) -> None:
    (tmp_path / "my workflow.yaml").write_text("")
    (tmp_path / "deploy").mkdir()
    files = {"my workflow.yaml", "deploy"}
    assert set(complete(bash_script, "hera-volcano", "submit", "", cwd=tmp_path)) == files
    assert set(complete(bash_script, "hera-volcano", "lint", "m", cwd=tmp_path)) == {"my workflow.yaml"}
    assert set(complete(bash_script, "hera-volcano", "dag", "--output-file", "", cwd=tmp_path)) == files
    assert complete(bash_script, "hera-volcano", "render", "--out", "", cwd=tmp_path) == ["deploy"]
    assert complete(bash_script, "hera-volcano", "status", "", cwd=tmp_path) == [], "a workflow name, not a file"


def test_every_option_of_every_command_is_offered(bash_script: Path) -> None:
    for name in COMMANDS:
        parser = parser_of(command_main(name))
        flags = {flag for action in parser._actions for flag in action.option_strings}
        assert flags and set(complete(bash_script, "hera-volcano", name, "-")) == flags, name


def test_the_zsh_script_names_every_command_and_option() -> None:
    r = run("hera_volcano", "completion", "zsh")
    assert (r.code, r.err) == (0, ""), r
    assert r.out.startswith("#compdef hera-volcano\n")
    for name, command in COMMANDS.items():
        assert f"        ({name})\n" in r.out
        assert f"'{name}:{command.summary}'" in r.out or "'" in command.summary
        for action in parser_of(command_main(name))._actions:
            for flag in action.option_strings:
                assert flag in r.out, (name, flag)
    assert "'(-o --output)'{-o,--output}'[yaml (default) or json]:output:(yaml json)'" in r.out
    assert "'--output-file[write to FILE (atomically) instead of stdout]:output-file:_files'" in r.out


def test_zsh_parses_the_script_and_registers_it(tmp_path: Path) -> None:
    script = tmp_path / "_hera-volcano"
    script.write_text(run("hera_volcano", "completion", "zsh").out)
    parsed = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert (parsed.returncode, parsed.stderr) == (0, "")
    program = 'autoload -U compinit; compinit -u -D; source "$1"; print -r -- "$_comps[hera-volcano]"'
    loaded = subprocess.run(
        ["zsh", "-f", "-c", program, "zsh", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert (loaded.returncode, loaded.stdout, loaded.stderr) == (0, "_hera-volcano\n", "")


def test_an_unknown_shell_is_a_usage_error() -> None:
    r = run("hera_volcano", "completion", "fish")
    assert (r.code, r.out) == (2, "") and "invalid choice: 'fish'" in r.err
