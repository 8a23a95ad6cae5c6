"""The report line, one definition for writer and reader (hera_volcano/pods/reports.py): whatever the launcher writes,
the follower reads back as the same name and value, hostile values included; what cannot travel is refused, never
written garbled, and a line the writer would refuse (a job may print any line) is refused by the reader too, naming
the output; names are checked by the same rule where the builders take them (shared/outputs)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hera_volcano.pods.reports import MAX_LINE, PREFIX, RESERVED, ReportError, format_line, is_name, parse_line
from hera_volcano.shared import outputs
from hera_volcano.shared.errors import ValidationError

#: Everything that could break a line, a quote, a tag, an expansion or an encoding.
HOSTILE = [
    'it\'s "quoted"',
    "a=b=c",
    "$(HOME) $$ ${X} `id`",
    "}} {x} {=1}",
    "ünïcödé 中文 😀 \u2028 \u2029 <>&",
    "\ttab\b\f",
    "",
    "  spaces  ",
    "back\\slash",
]
#: Values no line can carry as they are (a line break, a tag Argo substitutes, what Argo cannot pass on).
REFUSED = [
    "a\nb",
    "a\rb",
    "{{workflow.name}}",
    "x {{=1}}",
    "a\x00b",
    "a\x7fb",
    "\x07",
    "\U0010fffd",
    "\ud800",
    "a\x85b",  # NEL: a job's manifest cannot hold a C1 control (the step errors, or it arrives dropped)
    "\x9f",
]
#: Values a job may print in a line of its own to forge a report: each would have the next template read a workflow
#: parameter, evaluate an expression in the controller, or fail.
FORGED = [
    "{{workflow.parameters.secret}}",
    "{{=sprig.env('HOME')}}",
    "{{ workflow.parameters.secret }}",
    "x{{inputs.parameters}}y",
    "{{workflow.annotations.x}}",
    "{{{workflow.name}}}",
    "a\x00b",
    "a\x1bb",
    "a\x85b",
    "a\rb",
]

_names = st.from_regex(r"[a-zA-Z0-9_-]{1,63}", fullmatch=True).filter(lambda n: n not in RESERVED)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def read_back(line: str) -> tuple[str, str]:
    """What the follower keeps of a log holding ``line`` (split at line feeds only, as it splits the log)."""
    [one] = [parsed for parsed in map(parse_line, (line + "\n").split("\n")) if parsed is not None]
    return one


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_text_is_read_back_exactly(value: str) -> None:
    line = format_line("v", value)
    assert line == PREFIX + "v=" + value
    assert read_back(line) == ("v", value)


@pytest.mark.parametrize("value", REFUSED)
def test_a_text_no_line_can_carry_is_refused(value: str) -> None:
    with pytest.raises(ReportError, match=r"^output 'v'"):
        format_line("v", value)


@pytest.mark.parametrize(
    "value", [["{{x}}", "a\x00b", "\x7f", "\U0010fffd", "\x85\x9f"], {"k": "a\nb\u2028\x85 {{=1}}"}]
)
def test_a_json_value_is_escaped_to_travel_and_parses_back_the_same(value: object) -> None:
    line = format_line("v", value)
    assert "{{" not in line and "\n" not in line and "\x00" not in line and "\u2028" not in line
    assert json.loads(read_back(line)[1]) == value


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(name=_names, value=st.text() | _json)
def test_whatever_is_written_is_read_back_as_written(name: str, value: object) -> None:
    try:
        line = format_line(name, value)
    except ReportError:
        return
    assert len(line.encode()) <= MAX_LINE and "{{" not in line
    read_name, text = read_back(line)
    assert read_name == name
    assert text == value if isinstance(value, str) else json.loads(text) == value


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(name=st.text(max_size=70))
def test_writer_reader_and_builders_take_the_same_names(name: str) -> None:
    writes = True
    try:
        format_line(name, "1")
    except ReportError:
        writes = False
    assert writes == is_name(name) == (parse_line(f"{PREFIX}{name}=1") is not None)
    try:
        outputs.check_names("outputs", [name])
    except ValidationError:
        assert not is_name(name)
    else:
        assert is_name(name)


def test_a_line_over_the_limit_is_refused_and_not_read() -> None:
    value = "v" * (MAX_LINE - len(PREFIX) - len("n="))
    assert read_back(format_line("n", value)) == ("n", value)
    assert parse_line(f"{PREFIX}n={value}\r") == ("n", value), "a carriage return ending the line is no part of it"
    with pytest.raises(ReportError, match="over 4096 bytes"):
        format_line("n", value + "v")
    with pytest.raises(ReportError, match="over 4096 bytes") as refused:
        parse_line(f"{PREFIX}n={value}v")
    assert refused.value.output == "n"


@pytest.mark.parametrize("value", FORGED)
def test_a_forged_line_the_writer_would_refuse_is_refused_by_the_reader_naming_the_output(value: str) -> None:
    with pytest.raises(ReportError, match=r"^output 'loss': ") as written:
        format_line("loss", value)
    with pytest.raises(ReportError, match=r"^output 'loss': ") as read:
        parse_line(f"{PREFIX}loss={value}")
    assert str(read.value) == str(written.value), "one rule, one message"
    assert read.value.output == "loss"


@pytest.mark.parametrize(
    "line",
    [
        "hera-volcano:output",
        "hera-volcano:output loss",
        "hera-volcano:output {{x}}={{workflow.parameters.secret}}",
        "hera-volcano:output job-name={{workflow.parameters.secret}}",
        "hera-volcano:output dot.ted={{=1}}",
        " hera-volcano:output loss={{=1}}",
        "hera-volcano:outputloss=1",
        "echo hera-volcano:output loss={{=1}}",
    ],
)
def test_a_line_that_names_no_output_a_report_may_carry_is_no_report(line: str) -> None:
    assert parse_line(line) is None


def test_reserved_and_malformed_names_are_refused() -> None:
    for name in ("job-name", "job-phase", "", "x" * 64, "dot.ted", "sp ace", 1):
        with pytest.raises(ReportError, match=r"^output name"):
            format_line(name, "x")


#: Pieces of text that make a tag, an expression, a line break, an escape or an expansion when joined.
_PIECES = st.sampled_from(
    ["{", "}", "{{", "}}", "=", "workflow.parameters.secret", "=sprig.env('X')", "inputs.parameters", "$(X)", "$$"]
) | st.sampled_from(
    ["\\u007b", "\\", '"', "\r", "\n", "\x00", "\x1b", "\x7f", "\x85", "\u2028", "\ud800", "\U0010fffd", " "]
)
_line_values = st.lists(_PIECES | st.text(max_size=5), max_size=12).map("".join) | st.text()


@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@given(name=st.sampled_from(["loss", "job-name", "a.b", "x" * 63]) | _names, text=_line_values)
def test_no_line_the_reader_accepts_carries_a_tag_and_every_accepted_value_round_trips(name: str, text: str) -> None:
    """Whatever a job prints: the reader keeps a value only as the writer writes it, holding no Argo tag or
    expression, and reads it back exactly; a line it refuses names the output (what fails the step)."""
    line = PREFIX + name + "=" + text
    try:
        parsed = parse_line(line)
    except ReportError as e:
        assert e.output == name and str(e).startswith(f"output {name!r}: ")
        with pytest.raises(ReportError, match="^" + re.escape(str(e)) + "$"):
            format_line(name, text.removesuffix("\r"))
        return
    if parsed is None:
        assert not is_name(name)
        return
    read_name, value = parsed
    assert read_name == name and value == text.removesuffix("\r")
    assert "{{" not in value and "\x00" not in value and "\n" not in value and "\r" not in value
    assert format_line(name, value) == PREFIX + name + "=" + value, "the writer writes what the reader keeps"
    assert read_back(format_line(name, value)) == (name, value)
