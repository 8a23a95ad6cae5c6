"""Kubernetes' rules for what a pod template refers to (kube/references): ConfigMap and Secret keys, resource
field divisors, resource claims, readiness gates, DNS config and IP addresses; each rule refuses its case and accepts
the boundary. A builder's job reaches them when it is rendered."""

from __future__ import annotations

from typing import Any

import pytest

from hera_volcano import PodSettings, Program, batch_job
from hera_volcano.kube.references import (
    CONFIG_KEY_MESSAGE,
    IP_MESSAGE,
    check_pod_references,
    config_key_problem,
    divisor_problem,
    ip_problem,
)
from hera_volcano.shared.errors import ValidationError


def _found(spec: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in check_pod_references(spec, "spec")]


def _env(source: dict[str, Any]) -> dict[str, Any]:
    return {"containers": [{"name": "c", "env": [{"name": "A", "valueFrom": source}]}]}


# ---- ConfigMap and Secret keys ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["bad key!", "a/b", ".", "..", "..a", "k" * 254, "ключ"])
def test_config_keys_are_kubernetes_own(key: str) -> None:
    assert config_key_problem(key) == CONFIG_KEY_MESSAGE


@pytest.mark.parametrize("key", ["a", "A_B-c.d", ".hidden", "a..b", "k" * 253, "1"])
def test_config_keys_at_the_bounds_pass(key: str) -> None:
    assert config_key_problem(key) is None


@pytest.mark.parametrize("selector", ["configMapKeyRef", "secretKeyRef"])
def test_env_key_refs_name_a_key_and_an_object(selector: str) -> None:
    assert _found(_env({selector: {"name": "c", "key": "bad key!"}})) == [
        (f"spec.containers[0].env[0].valueFrom.{selector}.key", CONFIG_KEY_MESSAGE)
    ]
    found = _found(_env({selector: {"name": "My_Config", "key": "k"}}))
    assert [p for p, _ in found] == [f"spec.containers[0].env[0].valueFrom.{selector}.name"]
    assert _found(_env({selector: {"name": "my-config", "key": "config.yaml"}})) == []


# ---- resource field divisors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("divisor", ["3", "2m", "1k", "1Ki", "1e-3", "-1", "0.5"])
def test_cpu_divisors_are_1m_or_1(divisor: str) -> None:
    problem = divisor_problem("limits.cpu", divisor)
    assert problem is not None and "only divisor's values 1m and 1 are supported with the cpu resource" in problem


@pytest.mark.parametrize("divisor", ["1", "1m", "1000m", "0.001", 1, "1e0", None, "0"])
def test_cpu_divisors_that_are_1m_or_1_pass(divisor: object) -> None:
    assert divisor_problem("requests.cpu", divisor) is None


@pytest.mark.parametrize("resource", ["limits.memory", "requests.ephemeral-storage", "limits.hugepages-2Mi"])
@pytest.mark.parametrize("divisor", ["1", "1k", "1000", "1M", "1Ki", "1024Ki", "1Gi", "1E", "1Ei"])
def test_memory_divisors_that_are_a_power_of_a_unit_pass(resource: str, divisor: str) -> None:
    assert divisor_problem(resource, divisor) is None


@pytest.mark.parametrize("divisor", ["1024", "2Ki", "1m", "1e3", "512", "0.5Ki", "1500"])
def test_other_memory_divisors_are_refused(divisor: str) -> None:
    problem = divisor_problem("limits.memory", divisor)
    assert problem is not None and "supported with the memory resource" in problem


def test_env_divisors_are_checked_where_the_variable_is() -> None:
    from hera_volcano.volcano.rules import check_pod_template

    env = [{"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "3"}}}]
    template = {"spec": {"containers": [{"name": "c", "image": "busybox", "env": env}]}}
    found = [f.path for f in check_pod_template(template, "t") if f.severity == "error"]
    assert found == ["t.spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor"]


# ---- resource claims -----------------------------------------------------------------------------------------------


def _claims(pod: list[dict[str, Any]], container: list[dict[str, Any]]) -> list[tuple[str, str]]:
    spec = {"resourceClaims": pod, "containers": [{"name": "c", "resources": {"claims": container}}]}
    return _found(spec)


def test_a_container_claim_names_a_claim_of_the_pod() -> None:
    assert _claims([], [{"name": "gpu"}]) == [
        (
            "spec.containers[0].resources.claims[0].name",
            "must be one of the names in pod.spec.resourceClaims which is empty, not 'gpu'",
        )
    ]
    pod = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
    assert _claims(pod, [{"name": "gpu"}]) == []
    assert _claims(pod, [{"name": "gpu", "request": "one"}, {"name": "gpu", "request": "two"}]) == []
    assert [p for p, _ in _claims(pod, [{"name": "tpu"}])] == ["spec.containers[0].resources.claims[0].name"]


def test_a_container_claims_each_claim_once() -> None:
    pod = [{"name": "gpu", "resourceClaimName": "shared"}]
    assert _claims(pod, [{"name": "gpu"}, {"name": "gpu"}]) == [
        ("spec.containers[0].resources.claims[1]", "Duplicate value: 'gpu'")
    ]
    assert [p for p, _ in _claims(pod, [{"name": "gpu", "request": "a"}, {"name": "gpu"}])] == [
        "spec.containers[0].resources.claims[1]"
    ]
    assert [p for p, _ in _claims(pod, [{"name": "gpu", "request": "Bad_Request"}])] == [
        "spec.containers[0].resources.claims[0].request"
    ]


def test_pod_claims_are_named_once_with_one_source() -> None:
    found = _claims(
        [
            {"name": "gpu", "resourceClaimName": "a"},
            {"name": "gpu", "resourceClaimName": "b"},
            {"name": "Bad_Name", "resourceClaimName": "c"},
            {"name": "both", "resourceClaimName": "d", "resourceClaimTemplateName": "e"},
            {"name": "none"},
        ],
        [],
    )
    assert [p for p, _ in found] == [
        "spec.resourceClaims[1].name",
        "spec.resourceClaims[2].name",
        "spec.resourceClaims[3]",
        "spec.resourceClaims[4]",
    ]


# ---- readiness gates ----------------------------------------------------------------------------------------------


def test_readiness_gates_wait_for_a_qualified_condition() -> None:
    found = _found({"readinessGates": [{"conditionType": "bad type!"}]})
    assert [p for p, _ in found] == ["spec.readinessGates[0].conditionType"]
    assert "qualified name" in found[0][1]
    assert _found({"readinessGates": [{"conditionType": "example.com/feature-1"}, {"conditionType": "Ready"}]}) == []


# ---- DNS config -------------------------------------------------------------------------------------------------


def test_at_most_three_nameservers() -> None:
    four = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
    assert _found({"dnsConfig": {"nameservers": four}}) == [
        ("spec.dnsConfig.nameservers", "must not have more than 3 nameservers, got 4")
    ]
    assert _found({"dnsConfig": {"nameservers": four[:3]}}) == []


@pytest.mark.parametrize("server", ["dns.local", "10.0.0.256", "10.0.0", "fe80::1%eth0", "::g", " 10.0.0.1", ""])
def test_nameservers_are_ip_addresses(server: str) -> None:
    assert _found({"dnsConfig": {"nameservers": [server]}}) == [
        ("spec.dnsConfig.nameservers[0]", f"{IP_MESSAGE}, not {server!r}")
    ]


@pytest.mark.parametrize("address", ["10.0.0.1", "010.000.000.001", "255.255.255.255", "::1", "2001:db8::ffff"])
def test_ip_addresses_as_kubernetes_parses_them(address: str) -> None:
    assert ip_problem(address) is None


def test_search_domains_and_options() -> None:
    assert (
        _found({"dnsConfig": {"searches": ["svc.cluster.local.", "example.com"], "options": [{"name": "ndots"}]}}) == []
    )
    found = _found({"dnsConfig": {"searches": ["Bad_Domain"], "options": [{"value": "2"}]}})
    assert [p for p, _ in found] == ["spec.dnsConfig.searches[0]", "spec.dnsConfig.options[0].name"]
    many = [f"d{i}.example.com" for i in range(33)]
    assert [p for p, _ in _found({"dnsConfig": {"searches": many}})] == ["spec.dnsConfig.searches"]
    assert _found({"dnsConfig": {"searches": many[:32]}}) == []
    long = ["a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61] * 9  # 9 x 253 + 8 spaces > 2048
    assert [m for _, m in _found({"dnsConfig": {"searches": long}})] == [
        "must not have more than 2048 characters (including spaces) in the search list"
    ]
    assert _found({"dnsConfig": {"searches": long[:8]}}) == []


def test_host_alias_ips_follow_the_same_rule() -> None:
    from hera_volcano.kube.pods import check_pod_spec

    assert [f.path for f in check_pod_spec({"hostAliases": [{"ip": "010.0.0.1"}, {"ip": "db"}]}, "spec")] == [
        "spec.hostAliases[1].ip"
    ]


# ---- the builders ---------------------------------------------------------------------------------------------


def test_a_builders_job_is_held_to_them_when_it_is_rendered() -> None:
    def job(key: str) -> dict[str, object]:
        pod = PodSettings(env={"A": {"configMapKeyRef": {"name": "c", "key": key}}})
        return batch_job(image="busybox:1.37.0", program=Program.command(["true"]), pod=pod).to_dict()

    with pytest.raises(ValidationError, match=r"configMapKeyRef\.key: a valid config key"):
        job("bad key!")
    assert job("config.yaml")["kind"] == "Job"
