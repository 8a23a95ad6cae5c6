"""The report line, one definition for writer and reader (hera_volcano/pods/reports.py): whatever the launcher writes,
the follower reads back as the same name and value, hostile values included; what cannot travel is refused, never
written garbled; names are checked by the same rule where the builders take them (shared/outputs)."""

from __future__ import annotations

import json

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
    "ünïcödé 中文 😀 \u2028 \u2029 \x85 <>&",
    "\ttab\b\f",
    "",
    "  spaces  ",
    "back\\slash",
]
#: Values no line can carry as they are (a line break, a tag Argo substitutes, what Argo cannot pass on).
REFUSED = ["a\nb", "a\rb", "{{workflow.name}}", "x {{=1}}", "a\x00b", "a\x7fb", "\x07", "\U0010fffd", "\ud800"]

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


@pytest.mark.parametrize("value", [["{{x}}", "a\x00b", "\x7f", "\U0010fffd"], {"k": "a\nb\u2028\x85"}])
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
    with pytest.raises(ReportError, match="over 4096 bytes"):
        format_line("n", value + "v")
    assert parse_line(f"{PREFIX}n={value}v") is None


def test_reserved_and_malformed_names_are_refused() -> None:
    for name in ("job-name", "job-phase", "", "x" * 64, "dot.ted", "sp ace", 1):
        with pytest.raises(ReportError, match=r"^output name"):
            format_line(name, "x")
