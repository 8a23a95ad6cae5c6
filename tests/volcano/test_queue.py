"""Volcano Queues: the typed model and every rule of the Queue CRD and Volcano's queue webhook, one at a time on a
valid queue; and the rules between the queues of one hierarchy."""

from __future__ import annotations

import copy
import math
import re
from typing import Any

import pytest

import hera_volcano as hv
from hera_volcano.shared.findings import Finding
from hera_volcano.volcano.queue import Queue, queue_name
from hera_volcano.volcano.queue_rules import MAX_QUEUE_DEPTH, check_queue, check_queues, counted, go_float

GPU = "nvidia.com/gpu"
DELETE = object()


def valid_queue() -> dict[str, Any]:
    """A queue with every field the model writes, extended resources included."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "gpu-team", "labels": {"team": "ml"}, "annotations": {"owner": "ml-platform"}},
        "spec": {
            "weight": 4,
            "reclaimable": False,
            "priority": 10,
            "parent": "research",
            "dequeueStrategy": "fifo",
            "capability": {"cpu": "64", "memory": "512Gi", GPU: 8, "pods": "100"},
            "deserved": {"cpu": 32, "memory": "256Gi", GPU: "4"},
            "guarantee": {"resource": {GPU: "2", "cpu": "8"}},
        },
    }


def changed(changes: list[tuple[str, Any]]) -> dict[str, Any]:
    """The valid queue with dotted paths set (or deleted with DELETE); keys holding dots go in brackets."""
    queue = copy.deepcopy(valid_queue())
    for path, value in changes:
        keys = [bracketed or plain for bracketed, plain in re.findall(r"\[([^\]]+)\]|([^.\[]+)", path)]
        holder: Any = queue
        for key in keys[:-1]:
            holder = holder.setdefault(key, {})
        if value is DELETE:
            del holder[keys[-1]]
        else:
            holder[keys[-1]] = value
    return queue


WEIGHTS = "metadata.annotations[volcano.sh/hierarchy-weights]"


def hierarchy(path: str | None, weights: str | None) -> list[tuple[str, Any]]:
    """The change that sets the older hierarchy's annotations (None: leave one out)."""
    annotations = {"volcano.sh/hierarchy": path, "volcano.sh/hierarchy-weights": weights}
    return [("metadata.annotations", {k: v for k, v in annotations.items() if v is not None})]


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


# ---- the model -------------------------------------------------------------------------------------------------------


def test_the_model_renders_the_queue_as_plain_data_keeping_extended_resources_and_quantities_as_given() -> None:
    queue = hv.Queue(
        "gpu-team",
        weight=4,
        capability={"cpu": "64", "memory": "512Gi", GPU: 8},
        deserved={"cpu": 32, GPU: "4"},
        guarantee={GPU: 2},
        reclaimable=False,
        priority=10,
        parent="research",
        dequeue_strategy="fifo",
        labels={"team": "ml"},
        annotations={"owner": "ml-platform"},
    )
    assert queue.to_dict() == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "gpu-team", "labels": {"team": "ml"}, "annotations": {"owner": "ml-platform"}},
        "spec": {
            "weight": 4,
            "reclaimable": False,
            "priority": 10,
            "parent": "research",
            "dequeueStrategy": "fifo",
            "capability": {"cpu": "64", "memory": "512Gi", GPU: 8},
            "deserved": {"cpu": 32, GPU: "4"},
            "guarantee": {"resource": {GPU: 2}},
        },
    }


def test_a_bare_queue_leaves_volcanos_defaults_to_volcano() -> None:
    assert Queue("batch").to_dict() == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "batch"},
        "spec": {"weight": 1},
    }


def test_the_model_passes_its_own_rules_and_the_data_is_a_copy() -> None:
    capability = {"cpu": "8"}
    queue = Queue("a", capability=capability)
    data = queue.to_dict()
    assert check_queue(data) == []
    data["spec"]["capability"]["cpu"] = "1"
    assert queue.to_dict()["spec"]["capability"] == {"cpu": "8"}


@pytest.mark.parametrize(
    ("kwargs", "field", "rule"),
    [
        ({"name": "GPU_team"}, "name", "DNS-1123 subdomain"),
        ({"name": 3}, "name", "must be a string"),
        ({"weight": 0}, "weight", "positive"),
        ({"weight": 65536}, "weight", "at most 65535"),
        ({"weight": True}, "weight", "must be an integer"),
        ({"priority": -1}, "priority", "at least 0"),
        ({"priority": 2**31}, "priority", "at most 2147483647"),
        ({"reclaimable": "yes"}, "reclaimable", "true or false"),
        ({"parent": "Research"}, "parent", "DNS-1123 subdomain"),
        ({"parent": "gpu-team"}, "spec.parent", "must not be the queue itself"),
        ({"dequeue_strategy": "lifo"}, "dequeue_strategy", "fifo or traverse"),
        ({"capability": ["cpu"]}, "capability", "mapping of resource names"),
        ({"capability": {1: "2"}}, "capability", "resource names must be strings"),
        ({"capability": {"cpu": 0.5}}, "capability[cpu]", "the CRD refuses a decimal number"),
        ({"deserved": {"cpu": True}}, "deserved[cpu]", "quantity string"),
        ({"capability": {"memory": "1 GB"}}, "spec.capability.memory", "Kubernetes quantity"),
        ({"capability": {"cpu": "-1"}}, "spec.capability.cpu", "must not be negative"),
        ({"capability": {GPU: "1500m"}}, f"spec.capability[{GPU}]", "whole number"),
        ({"guarantee": {GPU: "1"}}, f"spec.deserved[{GPU}]", "is required: the queue's guarantee of"),
        ({"guarantee": {"cpu": "2"}, "deserved": {"cpu": "1"}}, "spec.deserved.cpu", "at least the guarantee"),
        ({"deserved": {"cpu": "9"}, "capability": {"cpu": "8"}}, "spec.deserved.cpu", "not exceed the capability"),
        ({"labels": {"team": 1}}, "labels", "mapping of strings"),
        ({"labels": {"bad key!": "x"}}, "metadata.labels[bad key!]", "label key"),
        ({"annotations": ["x"]}, "annotations", "mapping of strings"),
    ],
)
def test_the_model_refuses_what_volcano_refuses_naming_the_field(kwargs: dict[str, Any], field: str, rule: str) -> None:
    arguments = {"name": "gpu-team", **kwargs}
    name = arguments.pop("name")
    with pytest.raises(hv.ValidationError) as caught:
        Queue(name, **arguments)
    assert caught.value.field == field
    assert rule in caught.value.rule


def test_a_queue_is_built_where_it_is_defined_and_checked_again_when_rendered() -> None:
    capability = {"cpu": "8"}
    queue = Queue("a", capability=capability)
    capability["cpu"] = 0.5  # the mapping was the caller's: to_dict sees the change and refuses it
    with pytest.raises(hv.ValidationError, match=r"spec\.capability\.cpu: must be a quantity string"):
        queue.to_dict()


def test_queue_names_for_jobs() -> None:
    assert queue_name(Queue("gpu-team")) == "gpu-team"
    assert queue_name("default") == "default"
    assert queue_name(None) is None
    with pytest.raises(hv.ValidationError, match="queue: must be a queue name or a Queue, not int"):
        queue_name(3)


# ---- the rules on plain data (what lint checks) ----------------------------------------------------------------------


def test_the_valid_queue_has_no_findings() -> None:
    assert check_queue(valid_queue()) == []


ACCEPTED = [
    ("no-spec", [("spec", DELETE)]),
    ("weight-bounds", [("spec.weight", 65535)]),
    ("weight-one", [("spec.weight", 1)]),
    ("priority-zero", [("spec.priority", 0)]),
    ("parent-root", [("spec.parent", "root")]),
    ("parent-dotted", [("spec.parent", "team.research")]),
    ("traverse", [("spec.dequeueStrategy", "traverse")]),
    ("quantity-exponent", [("spec.capability.memory", "1e12")]),
    ("whole-gpus-as-millis", [(f"spec.capability[{GPU}]", "8000m")]),
    ("cpu-fraction", [("spec.capability.cpu", "1500m"), ("spec.deserved.cpu", "1"), ("spec.guarantee.resource", {})]),
    ("deserved-without-capability", [("spec.capability", DELETE)]),
    ("capability-without-deserved", [("spec.deserved", {}), ("spec.guarantee", DELETE)]),
    ("guarantee-equals-deserved", [("spec.guarantee.resource", {GPU: "4"})]),
    ("affinity", [("spec.affinity", {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["a"]}})]),
    ("extend-clusters", [("spec.extendClusters", [{"name": "c1", "weight": 2, "capacity": {"cpu": "8"}}])]),
    ("type", [("spec.type", "x" * 253)]),
    ("hierarchy", hierarchy("root/sci", "1/2")),
    ("hierarchy-go-numbers", hierarchy("a/b/c", "1_000/0x1p-2/.5")),
]


@pytest.mark.parametrize("changes", [c for _, c in ACCEPTED], ids=[i for i, _ in ACCEPTED])
def test_accepted_variants(changes: list[tuple[str, Any]]) -> None:
    assert check_queue(changed(changes)) == []


REJECTED = [
    (
        "api-version",
        [("apiVersion", "scheduling.volcano.sh/v1alpha1")],
        "apiVersion",
        "must be scheduling.volcano.sh/v1beta1",
    ),
    ("kind", [("kind", "Queues")], "kind", "must be Queue"),
    ("no-metadata", [("metadata", DELETE)], "metadata", "is required"),
    ("no-name", [("metadata.name", DELETE)], "metadata.name", "is required: jobs name the queue"),
    ("bad-name", [("metadata.name", "GPU")], "metadata.name", "DNS-1123 subdomain"),
    ("unknown-field", [("spec.capabilities", {})], "spec.capabilities", "not a field of the Volcano Queue spec"),
    (
        "unknown-guarantee-field",
        [("spec.guarantee.percentage", 10)],
        "spec.guarantee.percentage",
        "not a field of a Volcano queue guarantee",
    ),
    ("weight-string", [("spec.weight", "2")], "spec.weight", "must be an integer"),
    ("weight-zero", [("spec.weight", 0)], "spec.weight", "must be between 1 and 65535"),
    ("weight-over", [("spec.weight", 65536)], "spec.weight", "must be between 1 and 65535"),
    ("priority-negative", [("spec.priority", -1)], "spec.priority", "must be at least 0"),
    ("reclaimable-string", [("spec.reclaimable", "false")], "spec.reclaimable", "true or false"),
    ("dequeue", [("spec.dequeueStrategy", "lifo")], "spec.dequeueStrategy", "must be one of fifo, traverse"),
    ("parent-pattern", [("spec.parent", "A_b")], "spec.parent", "DNS-1123 subdomain"),
    ("parent-self", [("spec.parent", "gpu-team")], "spec.parent", "must not be the queue itself"),
    ("type-long", [("spec.type", "x" * 254)], "spec.type", "at most 253 characters"),
    ("float", [("spec.capability.cpu", 0.5)], "spec.capability.cpu", "the CRD refuses a decimal number"),
    ("huge-int", [("spec.capability.cpu", 2**63)], "spec.capability.cpu", "too large"),
    ("bad-quantity", [("spec.capability.cpu", "1e1.5")], "spec.capability.cpu", "Kubernetes quantity"),
    ("negative", [("spec.deserved.memory", "-1Gi")], "spec.deserved.memory", "must not be negative"),
    ("gpu-fraction", [(f"spec.guarantee.resource[{GPU}]", "1.5")], f"spec.guarantee.resource[{GPU}]", "whole number"),
    ("pods-fraction", [("spec.capability.pods", "1500m")], "spec.capability.pods", "whole number"),
    (
        "guarantee-no-deserved",
        [("spec.guarantee.resource.pods", "2")],
        "spec.deserved.pods",
        "is required: the queue's guarantee of pods (2) needs it",
    ),
    (
        "guarantee-over-deserved",
        [("spec.guarantee.resource.cpu", "33")],
        "spec.deserved.cpu",
        "must be at least the guarantee of cpu (33)",
    ),
    (
        "deserved-over-capability",
        [(f"spec.deserved[{GPU}]", "9")],
        f"spec.deserved[{GPU}]",
        "must not exceed the capability of nvidia.com/gpu (8)",
    ),
    ("label-value", [("metadata.labels.team", "-ml")], "metadata.labels.team", "label value"),
    ("hierarchy-lengths", hierarchy("root/a", "1"), WEIGHTS, "one weight per part"),
    ("hierarchy-only-path", hierarchy("root/a", None), WEIGHTS, "one weight per part"),
    ("hierarchy-only-weights", hierarchy(None, "0"), WEIGHTS, "'0' in '0' must be a number larger than 0"),
    ("hierarchy-zero", hierarchy("root/a", "1/0"), WEIGHTS, "'0' in '1/0' must be a number larger than 0"),
    ("hierarchy-word", hierarchy("a", "heavy"), WEIGHTS, "must be a number"),
    ("hierarchy-underflow", hierarchy("a", "1e-400"), WEIGHTS, "larger than 0"),
    ("not-a-mapping-spec", [("spec", ["weight"])], "spec", "must be a mapping"),
]


@pytest.mark.parametrize(("changes", "path", "rule"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected_variants_name_the_field_and_the_rule(changes: list[tuple[str, Any]], path: str, rule: str) -> None:
    found = errors(check_queue(changed(changes)))
    assert [f.path for f in found] == [path], found
    assert rule in found[0].message


WARNED = [
    ("namespace", [("metadata.namespace", "argo")], "metadata.namespace", "cluster-scoped"),
    (
        "generate-name",
        [("metadata.name", DELETE), ("metadata.generateName", "gpu-")],
        "metadata.generateName",
        "no job can know",
    ),
    ("status", [("status", {"state": "Closed"})], "status", "Volcano writes a queue's status"),
    ("uncounted", [("spec.capability.gpu", "8")], "spec.capability.gpu", "Volcano does not count 'gpu'"),
]


@pytest.mark.parametrize(("changes", "path", "rule"), [c[1:] for c in WARNED], ids=[c[0] for c in WARNED])
def test_what_the_api_server_drops_or_volcano_ignores_is_a_warning(
    changes: list[tuple[str, Any]], path: str, rule: str
) -> None:
    [finding] = check_queue(changed(changes))
    assert (finding.path, finding.severity) == (path, "warning")
    assert rule in finding.message


def test_not_a_mapping() -> None:
    assert check_queue(["a queue"]) == [Finding("queue", "error", "must be a mapping: a Volcano Queue object")]


def test_resources_volcano_counts() -> None:
    for name in ("cpu", "memory", "pods", "ephemeral-storage", GPU, "hugepages-2Mi", "example.kubernetes.io/x"):
        assert counted(name), name
    for name in ("gpu", "storage", "requests.cpu", "count/pods", "requests.nvidia.com/gpu"):
        assert not counted(name), name


# What Go 1.26's strconv.ParseFloat(text, 64) answers (run once; the webhook reads hierarchy weights with it).
GO_PARSE_FLOAT = [
    ("1", 1.0),
    ("1.5", 1.5),
    ("1_000", 1000.0),
    ("0x1p-2", 0.25),
    ("0x_1p0", 1.0),
    ("Inf", math.inf),
    ("-inf", -math.inf),
    ("infinity", math.inf),
    (".5", 0.5),
    ("5.", 5.0),
    ("+1", 1.0),
    ("1e-400", 0.0),
    ("1e400", None),
    ("1e", None),
    ("", None),
    (" 1", None),
    ("0x10", None),
    ("1__0", None),
    ("0b1", None),
]


@pytest.mark.parametrize(("text", "value"), GO_PARSE_FLOAT)
def test_hierarchy_weights_are_read_as_go_reads_them(text: str, value: float | None) -> None:
    assert go_float(text) == value


def test_go_reads_nan_and_the_webhook_lets_it_through() -> None:
    nan = go_float("NaN")
    assert nan is not None and math.isnan(nan)
    annotations = {"volcano.sh/hierarchy": "a", "volcano.sh/hierarchy-weights": "NaN"}
    assert check_queue(changed([("metadata.annotations", annotations)])) == []


# ---- queues of one hierarchy -----------------------------------------------------------------------------------------


def q(name: str, parent: str | None = None, **spec: Any) -> dict[str, Any]:
    return Queue(name, parent=parent, **spec).to_dict()


def test_a_valid_hierarchy_has_no_findings() -> None:
    queues = [
        q("org", capability={"cpu": "64", GPU: "8"}, deserved={"cpu": "32", GPU: "8"}, guarantee={GPU: "4"}),
        q("research", "org", capability={GPU: "8"}, deserved={"cpu": "16", GPU: "4"}, guarantee={GPU: "2"}),
        q("prod", "org", deserved={"cpu": "16", GPU: "4"}, guarantee={GPU: "2"}),
        q("elsewhere", "outside-the-set", capability={"cpu": "1000"}),
        q("top", "root"),
    ]
    assert check_queues(queues) == []


def test_two_queues_of_one_name() -> None:
    [finding] = check_queues([q("a"), q("a", weight=2)])
    assert (finding.path, finding.message) == ("queues[a].metadata.name", "two queues are both named 'a'")


def test_parents_must_form_a_tree() -> None:
    found = check_queues([q("a", "b"), q("b", "c"), q("c", "a")])
    assert [f.path for f in found] == ["queues[a].spec.parent", "queues[b].spec.parent", "queues[c].spec.parent"]
    assert found[0].message == "queues must form a tree: a -> b -> c goes round"


def test_hierarchies_deeper_than_volcano_allows() -> None:
    names = [f"q{i}" for i in range(MAX_QUEUE_DEPTH + 1)]
    chain = [q(names[0])] + [q(names[i], names[i - 1]) for i in range(1, len(names))]
    [finding] = check_queues(chain)
    assert finding.path == f"queues[{names[-1]}].spec.parent"
    assert f"makes the queue {MAX_QUEUE_DEPTH + 1} deep below root" in finding.message
    assert check_queues(chain[:-1]) == []
    # a parent outside the set counts too (it is there, at least one level up)
    [finding] = check_queues([q(names[1], "elsewhere"), *chain[2:]])
    assert finding.path == f"queues[{names[-1]}].spec.parent"


def test_a_child_capability_within_its_nearest_ancestor_that_sets_one() -> None:
    queues = [
        q("org", capability={"cpu": "64", GPU: "8"}),
        q("research", "org", capability={"cpu": "32"}),  # no GPUs: the ceiling is org's
        q("vision", "research", capability={"cpu": "48", GPU: "16"}),
    ]
    found = check_queues(queues)
    assert [(f.path, f.message) for f in found] == [
        ("queues[vision].spec.capability.cpu", "must not exceed the capability of its ancestor research (32)"),
        (f"queues[vision].spec.capability[{GPU}]", "must not exceed the capability of its ancestor org (8)"),
    ]


def test_children_deserved_and_guarantee_within_their_parents() -> None:
    queues = [
        q("org", deserved={"cpu": "10", "memory": "1Gi"}),
        q("a", "org", deserved={"cpu": "6", GPU: "2"}, guarantee={GPU: "1"}),
        q("b", "org", deserved={"cpu": "6", "memory": "1Gi"}),
    ]
    found = check_queues(queues)
    assert [(f.path, f.message) for f in found] == [
        (
            "queues[org].spec.deserved.cpu",
            "must cover its children's deserved of cpu together (a 6, b 6); this queue's is 10",
        ),
        (
            f"queues[org].spec.deserved[{GPU}]",
            f"must cover its children's deserved of {GPU} together (a 2); this queue sets none",
        ),
        (
            f"queues[org].spec.guarantee.resource[{GPU}]",
            f"must cover its children's guarantee of {GPU} together (a 1); this queue sets none",
        ),
    ]


def test_memory_is_compared_in_bytes_across_units() -> None:
    queues = [
        q("org", deserved={"memory": "1Gi"}),
        q("a", "org", deserved={"memory": "512Mi"}),
        q("b", "org", deserved={"memory": "536870912"}),
    ]
    assert check_queues(queues) == []
    queues.append(q("c", "org", deserved={"memory": "1"}))
    assert [f.path for f in check_queues(queues)] == ["queues[org].spec.deserved.memory"]
