"""Kubernetes and Argo name rules: one accepted and one rejected value per edge of each rule."""

from __future__ import annotations

import pytest

from hera_volcano.kube import names
from hera_volcano.shared.errors import ValidationError

ACCEPTED = [
    (names.dns1123_label, "a"),
    (names.dns1123_label, "mpi-worker-0"),
    (names.dns1123_label, "0abc"),
    (names.dns1123_label, "a" * 63),
    (names.dns1123_subdomain, "example.com"),
    (names.dns1123_subdomain, "a-b.c-d.e"),
    (names.dns1123_subdomain, ".".join(["a" * 63] * 3) + "." + "a" * 61),  # 253
    (names.dns1035_label, "mpi-job"),
    (names.dns1035_label, "a" * 63),
    (names.qualified_name, "MyName"),
    (names.qualified_name, "my.name_x-1"),
    (names.qualified_name, "example.com/MyName"),
    (names.qualified_name, "status.state.phase"),
    (names.qualified_name, "a" * 63),
    (names.label_value, ""),
    (names.label_value, "Completed"),
    (names.label_value, "a.b_c-d"),
    (names.label_value, "a" * 63),
    (names.argo_name, "Submit-Job"),
    (names.argo_name, "0step"),
    (names.argo_name, "a" * 128),
]

REJECTED = [
    (names.dns1123_label, "", "DNS-1123 label"),
    (names.dns1123_label, "Mpi", "DNS-1123 label"),
    (names.dns1123_label, "-a", "DNS-1123 label"),
    (names.dns1123_label, "a-", "DNS-1123 label"),
    (names.dns1123_label, "a.b", "DNS-1123 label"),
    (names.dns1123_label, "a_b", "DNS-1123 label"),
    (names.dns1123_label, "a" * 64, "at most 63"),
    (names.dns1123_label, "a\n", "DNS-1123 label"),
    (names.dns1123_label, 3, "must be a string"),
    (names.dns1123_subdomain, "a..b", "DNS-1123 subdomain"),
    (names.dns1123_subdomain, "a.-b", "DNS-1123 subdomain"),
    (names.dns1123_subdomain, "Example.com", "DNS-1123 subdomain"),
    (names.dns1123_subdomain, "a" * 254, "at most 253"),
    (names.dns1035_label, "1job", "DNS-1035 label"),
    (names.dns1035_label, "job.x", "DNS-1035 label"),
    (names.dns1035_label, "a" * 64, "DNS-1035 label"),
    (names.qualified_name, "", "qualified name"),
    (names.qualified_name, "a" * 64, "qualified name"),
    (names.qualified_name, "-a", "qualified name"),
    (names.qualified_name, "/a", "qualified name"),
    (names.qualified_name, "a/", "qualified name"),
    (names.qualified_name, "a/b/c", "qualified name"),
    (names.qualified_name, "Example.com/a", "qualified name"),
    (names.qualified_name, '#(type=="Ready")', "qualified name"),
    (names.label_value, "a b", "label value"),
    (names.label_value, '"Completed"', "label value"),
    (names.label_value, "-a", "label value"),
    (names.label_value, "a" * 64, "label value"),
    (names.argo_name, "-a", "Argo"),
    (names.argo_name, "a_b", "Argo"),
    (names.argo_name, "a.b", "Argo"),
    (names.argo_name, "{{inputs.parameters.x}}", "Argo"),
    (names.argo_name, "a" * 129, "at most 128"),
]


@pytest.mark.parametrize(("rule", "value"), ACCEPTED)
def test_accepted(rule: names.Rule, value: str) -> None:
    assert rule(value) is None


@pytest.mark.parametrize(("rule", "value", "fragment"), REJECTED)
def test_rejected(rule: names.Rule, value: object, fragment: str) -> None:
    message = rule(value)
    assert message is not None
    assert fragment in message


def test_messages_describe_the_rule() -> None:
    assert names.dns1123_label("X") == (
        "must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit,"
        " at most 63 characters)"
    )


def test_check_raises_with_field_and_rule() -> None:
    names.check("job_name", "mpi-job", names.dns1035_label)
    with pytest.raises(ValidationError) as caught:
        names.check("job_name", "1job", names.dns1035_label)
    assert caught.value.field == "job_name"
    assert "DNS-1035 label" in caught.value.rule
    assert str(caught.value).startswith("job_name: must be a DNS-1035 label")
