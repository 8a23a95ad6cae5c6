"""Which of an account's writes no admission policy checks, and why each such write is granted anyway.

``create`` on Pods, batch Jobs, Deployments, JobFlows, Workflows (any kind that makes pods) lets an account run
pods as any service account of the namespace, privileged, with any of its Secrets: RBAC cannot say what the object
holds. hera-volcano's admission policy checks the kinds of :data:`hera_volcano.tools.job_policy.COVERED`; a write
of any other kind is refused unless the admin allows that kind by name, and then the Role says so on its rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hera_volcano.shared import checks
from hera_volcano.shared.errors import ValidationError
from hera_volcano.tools.job_policy import COVERED
from hera_volcano.tools.rbac.need import Need, Rule, order
from hera_volcano.tools.rbac.refs import parse_resource, resource_text

#: Verbs that make or change an object (admission sees these; ``delete`` makes nothing run).
WRITES = frozenset({"create", "update", "patch"})
#: What Argo's own containers write: a step's results for every pod, an owned object's finalizer on OpenShift.
#: They are data of the workflow, never a pod.
ARGO_WRITES = frozenset({("argoproj.io", "workflowtaskresults"), ("argoproj.io", "workflows/finalizers")})
#: The Role's annotation that says why a write no policy checks is granted (``-N``: the rule's index).
UNCOVERED_PREFIX = "hera-volcano/uncovered-"
_OPTION = "allow_uncovered (--allow-uncovered)"


def allowed_uncovered(values: Sequence[str]) -> frozenset[Rule]:
    """``allow_uncovered`` of ``rbac_for``: the (group, resource) of each ``RESOURCE[.GROUP]``."""
    return frozenset(
        parse_resource(text, f"allow_uncovered[{i}]")
        for i, text in enumerate(checks.strings("allow_uncovered", values))
    )


def uncovered(needs: Iterable[Need], policy: bool, allowed: frozenset[Rule]) -> dict[Rule, str]:
    """Why each write of ``needs`` that no policy checks is granted, by (group, resource); ``policy``: whether
    hera-volcano writes its admission policy. A write neither covered nor allowed is a ValidationError naming the
    template, the resource and how to allow it."""
    writes: dict[Rule, tuple[set[str], str]] = {}
    for need in needs:
        key = (need.group, need.resource)
        if WRITES.intersection(need.verbs) and key not in ARGO_WRITES and not (policy and key in COVERED):
            writes.setdefault(key, (set(), need.why))[0].update(WRITES.intersection(need.verbs))
    reasons: dict[Rule, str] = {}
    for key, (written, why) in sorted(writes.items()):
        what = f"{', '.join(order(written))} on {key[1]} ({key[0] or 'core'})"
        if key in COVERED:
            reasons[key] = (
                f"{what}: no admission policy written (job_policy=None, --no-admission-policy): one of the cluster's"
                " own must check what these objects hold"
            )
        elif key in allowed:
            reasons[key] = (
                f"{what}: checked by no admission policy, allowed deliberately by {_OPTION} {resource_text(*key)}"
            )
        else:
            raise ValidationError(why, _refusal(what, key, policy))
    return reasons


def check_used(values: Sequence[str], granted: Iterable[Rule], policy: bool) -> None:
    """Each ``allow_uncovered`` entry must allow a write the workflows make: one that allows nothing (a typo, a kind
    no workflow writes, a kind the policy checks anyway) is a ValidationError, not an allowance silently kept."""
    used = set(granted)
    for i, text in enumerate(values):
        key = parse_resource(text, f"allow_uncovered[{i}]")
        if key in used:
            continue
        if policy and key in COVERED:
            why = "hera-volcano's admission policy checks it, so its writes need no allowance"
        else:
            why = "no workflow given writes it (create, update or patch), so it would allow nothing"
        raise ValidationError(f"allow_uncovered[{i}]", f"{resource_text(*key)}: {why}")


def _refusal(what: str, key: Rule, policy: bool) -> str:
    """Why a write is refused, and how to grant it deliberately."""
    covers = ", ".join(sorted(resource_text(*k) for k in COVERED)) if policy else "nothing: job_policy=None"
    return (
        f"needs {what}, which no admission policy checks (hera-volcano's covers {covers}): RBAC cannot say what the"
        " objects hold, so for a kind that makes pods its holder could run them as any service account of the"
        f" namespace, privileged, with any of its Secrets. Allow the kind deliberately with {_OPTION}"
        f" {resource_text(*key)} (the Role then says why), or leave this workflow out and write its Role by hand"
    )


def reason_annotations(rules: Sequence[Rule], reasons: Mapping[Rule, str]) -> dict[str, str]:
    """``hera-volcano/uncovered-N`` for each rule (by its index in ``rules``) granted without a policy."""
    return {f"{UNCOVERED_PREFIX}{i}": reasons[key] for i, key in enumerate(rules) if key in reasons}
