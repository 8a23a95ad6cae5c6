"""A call's arguments against the inputs of the template it calls.

Argo passes a step's or task's argument to the input of the same name and ignores any other: a misspelt argument
(``data_dir`` for the input ``data-dir``) leaves the input at its default, and the step runs on it. An input with
neither a default nor a value that the call leaves out is refused at submission ("inputs.parameters.X was not
supplied"). Which inputs a call must pass is Argo's rule as :class:`hera_volcano.argo.parameters.CallArguments`
states it, by which the builders check their calls too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hera_volcano.argo.parameters import CallArguments, has_own_value
from hera_volcano.shared.findings import Finding, as_list, as_map, error
from hera_volcano.shared.suggestions import closest


def _named(holder: object) -> list[tuple[int, str, Mapping[str, object]]]:
    """``(index, name, parameter)`` of each parameter of ``holder`` that has a plain name (others are reported by the
    parameter-list rules)."""
    return [
        (i, name, p)
        for i, p in enumerate(as_list(as_map(holder).get("parameters")))
        if isinstance(p, Mapping) and isinstance(name := p.get("name"), str) and name and "{{" not in name
    ]


def check_arguments(
    call: Mapping[str, object], path: str, called: str, template: Mapping[str, object]
) -> Iterator[Finding]:
    """The parameters ``call`` (at ``path``) passes to ``template`` (``called`` says which, for messages): each names
    one of its inputs, and every input without a default or value is passed."""
    inputs = {n: p for _, n, p in _named(template.get("inputs"))}
    passed = _named(call.get("arguments"))
    unknown = set(CallArguments.judge(inputs.values(), (g for _, g, _ in passed)).unknown)
    meant: set[str] = set()
    for i, given, _ in passed:
        if given not in unknown:
            continue
        guess = closest(given, inputs)
        at = f"{path}.arguments.parameters[{i}].name"
        if guess is None:
            known = f"its inputs are {', '.join(map(repr, inputs))}" if inputs else "it has no input parameters"
            yield error(at, f"{given!r} is not an input of {called} ({known}): Argo ignores the argument")
            continue
        meant.add(guess)
        default = inputs[guess].get("default")
        if any(g == guess for _, g, _ in passed):
            effect = f"{guess!r} is passed too"
        elif default is not None:
            effect = f"{guess!r} keeps its default {str(default)!r}"
        elif has_own_value(inputs[guess]):
            effect = f"{guess!r} keeps its own value"
        else:
            effect = f"Argo refuses the call: inputs.parameters.{guess} was not supplied"
        yield error(
            at,
            f"{given!r} is not an input of {called} (did you mean {guess!r}?): Argo ignores the argument, and {effect}",
        )
    given_names = {g for _, g, _ in passed}
    yield from missing_inputs(template, given_names | meant, f"{path}.arguments", called)


def missing_inputs(template: Mapping[str, object], given: set[str], path: str, called: str) -> Iterator[Finding]:
    """An error at ``path`` for each input of ``template`` with no value of its own that is not in ``given``."""
    inputs = [p for _, _, p in _named(template.get("inputs"))]
    for input_name in CallArguments.judge(inputs, given).missing:
        yield error(
            path,
            f"does not pass {input_name!r}, an input of {called} without a default: Argo refuses the"
            f" workflow at submission (inputs.parameters.{input_name} was not supplied)",
        )


def check_entry_inputs(template: Mapping[str, object], arguments: object, path: str, called: str) -> Iterator[Finding]:
    """The workflow's own arguments (at ``path``) give the entrypoint and the exit handler their inputs."""
    yield from missing_inputs(template, {n for _, n, _ in _named(arguments)}, path, called)
