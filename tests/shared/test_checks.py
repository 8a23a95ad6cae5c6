"""The argument checks every builder shares: a lone string where a list belongs is refused, naming the field."""

from __future__ import annotations

import pytest

from hera_volcano import ValidationError
from hera_volcano.shared import checks


@pytest.mark.parametrize("value", ["echo", b"echo", 3, None, {"a": 1}])
def test_strings_refuses_what_is_not_a_list(value: object) -> None:
    with pytest.raises(ValidationError) as e:
        checks.strings("command", value)
    assert e.value.field == "command" and e.value.rule.startswith("must be a list of strings")


def test_a_string_is_named_in_the_message_and_a_long_one_cut() -> None:
    with pytest.raises(ValidationError) as e:
        checks.strings("after", "prep")
    assert e.value.rule == "must be a list of strings, not the string 'prep' (read letter by letter)"
    with pytest.raises(ValidationError) as long:
        checks.strings("after", "x" * 100)
    assert "'" + "x" * 37 + "...'" in long.value.rule and len(long.value.rule) < 120


def test_strings_accepts_lists_and_tuples_and_names_a_bad_item() -> None:
    assert checks.strings("f", ("a", "b")) == ["a", "b"]
    with pytest.raises(ValidationError) as e:
        checks.strings("f", ["a", 1])
    assert e.value.field == "f[1]"
    with pytest.raises(ValidationError):
        checks.strings("f", [], non_empty=True)
