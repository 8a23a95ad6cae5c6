"""YAML files that stand for far more than they hold: aliases of a long string, nested aliases of sequences and
mappings, merge keys (``<<``), tags that hide aliases from the fast constructor, deep nesting, long keys, and a
manifest aliased into many templates. Lint and ``submit --dry-run`` must answer each in one line, in time and memory
linear in its size; ``make bench`` (benchmarks/run.py) measures them, the unit tests check the answer."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Final

#: A Workflow up to its spec's first field, so that the bombs sit where lint reads.
HEADER: Final = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: bomb}\nspec:\n  entrypoint: main\n"


def string_alias(size: int = 100 * 1024, count: int = 40_000) -> str:
    """The issue's file: one string of ``size`` characters aliased ``count`` times (222 KB standing for 4 GB)."""
    return HEADER + f"  s: &s {'x' * size}\n  x: [{','.join(['*s'] * count)}]\n"


def string_keys(size: int = 100 * 1024, count: int = 40_000) -> str:
    """The same string as the key of ``count`` mappings: keys count as values do."""
    return HEADER + f"  s: &s {'k' * size}\n  x: [{', '.join(['{*s : 1}'] * count)}]\n"


def nested_sequences(levels: int = 9, width: int = 10) -> str:
    """A "billion laughs": each level lists the one below ``width`` times (10**9 strings in under 600 bytes)."""
    names = [f"l{i}" for i in range(levels)]
    lines = [f"  {names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    lines += [f"  {b}: &{b} [{', '.join([f'*{a}'] * width)}]" for a, b in itertools.pairwise(names)]
    return HEADER + "\n".join(lines) + "\n"


def nested_mappings(levels: int = 9, width: int = 10) -> str:
    """The billion laughs with mappings: each level maps ``width`` keys to the one below."""
    names = [f"m{i}" for i in range(levels)]
    lines = [f"  {names[0]}: &{names[0]} {{{', '.join(f'k{j}: lol' for j in range(width))}}}"]
    lines += [f"  {b}: &{b} {{{', '.join(f'k{j}: *{a}' for j in range(width))}}}" for a, b in itertools.pairwise(names)]
    return HEADER + "\n".join(lines) + "\n"


def merge_bomb(indent: str = "", levels: int = 9) -> str:
    """The first security review's merge bomb (609 bytes): each level merges an empty map (so that PyYAML's
    constructor, not the fast one, built it) and lists the level below ten times."""
    names = "abcdefghijklmnopqrstuvwxyz"[:levels]
    lines = [f"{indent}a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}{b}: &{b} {{<<: {{}}, k: [{', '.join([f'*{a}'] * 10)}]}}" for a, b in itertools.pairwise(names)]
    return "\n".join(lines) + "\n"


def merge_keys() -> str:
    """The merge bomb in a Workflow's spec."""
    return HEADER + merge_bomb("  ")


def merge_many(levels: int = 11, width: int = 10) -> str:
    """Maps that merge the level below ``width`` times (PyYAML before 6.0.4 flattened that into 10**n entries)."""
    lines = ["  a0: &a0 {" + ", ".join(f"k{i}: {'v' * 100}" for i in range(width)) + "}"]
    lines += [f"  a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * width)}], own{i}: 1}}" for i in range(1, levels)]
    return HEADER + "\n".join(lines) + "\n"


def tagged(levels: int = 12, width: int = 10) -> str:
    """The billion laughs inside an ``!!omap``, which PyYAML's own constructor builds: nothing of it passes through
    the fast constructor before it is counted."""
    names = [f"t{i}" for i in range(levels)]
    entries = [f"{names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    entries += [f"{b}: &{b} [{', '.join([f'*{a}'] * width)}]" for a, b in itertools.pairwise(names)]
    return HEADER + f"  x: !!omap [{', '.join(entries)}]\n"


def deep_flow(depth: int = 100_000) -> str:
    """Sequences nested ``depth`` deep in 200 KB (libyaml stops at 1,000 levels)."""
    return HEADER + "  x: " + "[" * depth + "]" * depth + "\n"


def deep_blocks(depth: int = 1_000) -> str:
    """Block mappings nested ``depth`` deep, each one space further in."""
    return HEADER + "".join(f"{' ' * (2 + i)}k{i}:\n" for i in range(depth)) + " " * (2 + depth) + "end\n"


def long_key(size: int = 1_000_000) -> str:
    """One key of ``size`` characters where lint reads fields (an unknown field of the spec), written as an
    explicit key (libyaml refuses implicit keys over 1024 characters)."""
    return HEADER + f"  ? {'k' * size}\n  : 1\n"


def many_documents(count: int = 2_000) -> str:
    """``count`` documents, each within the budget alone (a string aliased 100 times): the budget is the stream's."""
    document = f"apiVersion: v1\nkind: ConfigMap\ndata: {{s: &s {'x' * 1000}}}\nx: [{', '.join(['*s'] * 100)}]\n"
    return "---\n".join([document] * count)


def _manifest_templates(manifest: str, templates: int) -> str:
    """A Workflow whose ``templates`` resource templates all hold ``manifest`` (one alias each)."""
    quoted = manifest.replace("\n", "\\n")
    lines = [f'  templates:\n  - name: main\n    resource: {{action: create, manifest: &m "{quoted}"}}']
    lines += [f"  - name: t{i}\n    resource: {{action: create, manifest: *m}}" for i in range(templates)]
    return HEADER + "\n".join(lines) + "\n"


def aliased_manifest(templates: int = 400, tasks: int = 300) -> str:
    """A Volcano Job manifest listing one task ``tasks`` times, aliased into ``templates`` resource templates: each
    template's manifest is parsed and checked on its own, so every parse counts against the file's budget (25 KB
    took lint 16 s before)."""
    task = (
        "{name: t, replicas: 1, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox,"
        " command: [sh, -c, echo], resources: {limits: {cpu: '1', memory: 1Gi}}}]}}}"
    )
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {generateName: j-}\n"
        f"spec:\n  minAvailable: 1\n  t: &t {task}\n  tasks: [{', '.join(['*t'] * tasks)}]\n"
    )
    return _manifest_templates(manifest, templates)


def manifest_with_tags(width: int = 1000) -> str:
    """A manifest holding an Argo tag, whose commands lint reads with a parse of its own (PyYAML's ``safe_load``,
    with no budget, before): ``width`` tasks of ``width`` containers of ``width`` arguments (12 KB, a billion)."""
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {generateName: j-}\nspec:\n"
        f"  x: [&s '{{{{inputs.parameters.x}}}}', &c {{name: c, image: b, command: [{', '.join(['*s'] * width)}]}},"
        f" &t {{template: {{spec: {{containers: [{', '.join(['*c'] * width)}]}}}}}}]\n"
        f"  tasks: [{', '.join(['*t'] * width)}]\n"
    )
    return _manifest_templates(manifest, 0)


def deep_values(depth: int = 990) -> str:
    """Mappings nested just under libyaml's limit, as the value of the fields lint reads: whatever walks them
    recursively must not exhaust the stack."""
    nested = "{a: " * depth + "x" + "}" * depth
    return HEADER + f"  templates: [{{name: main, steps: {nested}, dag: {nested}, inputs: {nested}}}]\n"


#: Every generator by name, with the arguments the issue's sizes call for.
BOMBS: Final[dict[str, Callable[[], str]]] = {
    "string-alias": string_alias,
    "string-keys": string_keys,
    "nested-sequences": nested_sequences,
    "nested-mappings": nested_mappings,
    "merge-keys": merge_keys,
    "merge-many": merge_many,
    "tagged": tagged,
    "deep-flow": deep_flow,
    "deep-blocks": deep_blocks,
    "deep-values": deep_values,
    "long-key": long_key,
    "many-documents": many_documents,
    "aliased-manifest": aliased_manifest,
    "manifest-with-tags": manifest_with_tags,
}
