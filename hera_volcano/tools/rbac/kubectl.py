"""What a ``kubectl`` call needs: the exec form of a container is one call, read for itself; the words of a shell
script are read only to suggest what to declare (:mod:`.pods`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from hera_volcano.shared.findings import as_list
from hera_volcano.tools.rbac.need import VERB_ORDER, Call

#: ``kubectl`` as a word of a script (``/usr/bin/kubectl`` too; not ``kubectl_prelude.sh`` or ``$KUBECTL_ERR``).
_KUBECTL = re.compile(r"(?<![\w.-])kubectl(?![\w.-])")
#: Where a shell command ends: the words after ``kubectl`` up to here are its arguments.
_COMMAND_END = re.compile(r"[|;&)`]")
#: kubectl flags whose value is the next word (``-n NS``); ``--flag=value`` needs no table. ``-f`` is a file
#: everywhere but in ``logs`` (follow).
_VALUE_FLAGS = frozenset(
    """-n --namespace -l --selector --field-selector -c --container -o --output --context --cluster --user
    --kubeconfig --request-timeout -s --server --since --since-time --tail --for --timeout --token --as --as-group
    -f --filename --template --sort-by --chunk-size --max-log-requests -L --label-columns""".split()  # noqa: SIM905
)
_SELECTING_FLAGS = ("-l", "--selector", "--field-selector")
_WATCH_FLAGS = ("-w", "--watch", "--watch-only")
_POD_NAMES = ("pods", "pod", "po")
_VERSION = re.compile(r"v\d+(?:(?:alpha|beta)\d+)?")
#: ``RESOURCE.GROUP`` as kubectl takes it (a plural resource name, fully qualified), optionally ``/NAME``.
_QUALIFIED = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+)"
)


def words(container: Mapping[str, object]) -> list[str]:
    """The container's exec form: its command, then its args."""
    return [w for key in ("command", "args") for w in as_list(container.get(key)) if isinstance(w, str)]


def scripts(container: Mapping[str, object]) -> str:
    """The text a container runs: its command, args and script source (a string where a list belongs counts too)."""
    parts: list[object] = []
    for key in ("command", "args", "source"):
        value = container.get(key)
        parts.extend([value] if isinstance(value, str) else as_list(value))
    return "\n".join(p for p in parts if isinstance(p, str))


def exec_call(container: Mapping[str, object]) -> list[str] | None:
    """The arguments of the container's one ``kubectl`` call when its exec form is that call
    (``command: [kubectl, get, ...]``): a call declared by the container itself. None for any other command."""
    exec_form = words(container)
    if exec_form and exec_form[0].rsplit("/", 1)[-1] == "kubectl":
        return exec_form[1:]
    return None


def script_calls(container: Mapping[str, object]) -> list[list[str]] | None:
    """The arguments of each ``kubectl`` word of a container's scripts, up to the end of that shell command (comment
    lines skipped), or None when no script names ``kubectl``. Words, not calls: a word in an ``echo`` reads as one
    too, so nothing is granted from them; lint suggests a declaration from them."""
    if exec_call(container) is not None:
        return None
    calls = []
    for line in scripts(container).replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("#"):
            continue
        for match in _KUBECTL.finditer(line):
            rest = _COMMAND_END.split(line[match.end() :], maxsplit=1)[0]
            calls.append([w.strip("\"'") for w in rest.split()])
    return calls or None


def qualified_resource(token: str) -> tuple[str, str] | None:
    """(group, resource) of ``RESOURCE[.VERSION].GROUP`` as kubectl takes it (RBAC names no version), else None."""
    match = _QUALIFIED.fullmatch(token)
    if match is None:
        return None
    resource, group = match.group(1), match.group(3)
    version, _, rest = group.partition(".")
    if _VERSION.fullmatch(version) and "." in rest:
        group = rest
    return group, resource


def _parse(args: Sequence[str]) -> tuple[list[str], bool, bool, bool]:
    """A call's positional words, and whether it selects, watches, and waits not (``--wait=false``)."""
    positional: list[str] = []
    selects = watches = no_wait = False
    i = 0
    while i < len(args):
        word = args[i]
        flag = word.split("=", 1)[0]
        if word.startswith("-"):
            selects = selects or flag in _SELECTING_FLAGS or (word.startswith("-l") and not word.startswith("--"))
            watches = watches or flag in _WATCH_FLAGS
            no_wait = no_wait or word == "--wait=false"
            takes_value = flag in _VALUE_FLAGS and not (flag == "-f" and positional[:1] == ["logs"])
            i += 2 if takes_value and "=" not in word and len(word) == len(flag) else 1
            continue
        positional.append(word)
        i += 1
    return positional, selects, watches, no_wait


def call_needs(args: Sequence[str]) -> list[Call]:
    """(group, resource, verbs) one ``kubectl ARGS`` call needs: ``get`` of a named object gets it, of a selector
    (or of all) lists it, ``--watch`` lists and watches; ``wait`` gets, lists and watches; ``logs`` gets (or with a
    selector lists) the pod and gets its log; ``delete`` deletes, lists for a selector, and gets and watches a
    deletion it waits for. Pods are read by their short names, other resources only fully qualified
    (``jobs.batch.volcano.sh``); any other call (``api-resources``, ``version``, a word in a message) needs nothing."""
    positional, selects, watches, no_wait = _parse(args)
    if not positional or positional[0] not in ("get", "wait", "logs", "delete"):
        return []
    verb = positional[0]
    target = positional[1] if len(positional) > 1 else ""
    if verb == "logs":
        pod_verbs = ("list",) if selects else ("get",)
        return [("", "pods", pod_verbs), ("", "pods/log", ("get",))]
    kind, _, name = target.partition("/")
    named = bool(name) or len(positional) > 2
    found = ("", "pods") if kind in _POD_NAMES else qualified_resource(kind)
    if found is None:
        return []
    if verb == "wait":
        verbs: set[str] = {"get", "list", "watch"}
    elif verb == "get":
        verbs = {"get" if named and not selects else "list"} | ({"list", "watch"} if watches else set())
    else:
        verbs = {"delete", "list" if selects else "get"} | (set() if no_wait else {"get", "watch"})
        if named and no_wait and not selects:
            verbs = {"delete"}
    return [(found[0], found[1], tuple(v for v in VERB_ORDER if v in verbs))]
