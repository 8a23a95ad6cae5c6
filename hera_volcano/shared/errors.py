"""The error types users catch: bad input, named by field and rule; and a cluster that said no or was not there."""

from __future__ import annotations

from collections.abc import Mapping


class ValidationError(ValueError):
    """Raised when input breaks a Kubernetes, Volcano or Argo rule.

    ``field`` is the path of the offending value (``spec.tasks[1].replicas``), ``rule`` says what it must be,
    so the message can be shown to a user as one line without a traceback.

    :param field: the path of the offending value.
    :param rule: what it must be.
    """

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


class ClusterError(RuntimeError):
    """Raised when the cluster refuses a request or cannot be reached, with what was asked and why it failed.

    ``reason`` is the API's own (``Forbidden``, ``NotFound``, ``Unauthorized``, ``AlreadyExists``, ``Invalid``...)
    or ``Unreachable`` / ``NoConfiguration`` when no request got through. A Forbidden names what RBAC refused:
    ``user`` may not ``verb`` ``resource`` (``pods/log`` for a subresource) in API ``group`` (``""`` is core) in
    ``namespace`` (None at the cluster scope). The message is one line for a person.

    :param message: what was asked and why it failed, in one line.
    :param reason: why, as the API names it (or ``Unreachable``, ``NoConfiguration``).
    :param status: the HTTP status of the answer (None when no request got through).
    :param verb: the request's verb (``get``, ``create``...), for a Forbidden.
    :param resource: the resource asked for (``pods/log`` for a subresource).
    :param group: its API group (``""`` is core).
    :param namespace: the namespace asked in (None at the cluster scope).
    :param user: the user RBAC refused.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        status: int | None = None,
        verb: str | None = None,
        resource: str | None = None,
        group: str | None = None,
        namespace: str | None = None,
        user: str | None = None,
    ) -> None:
        self.reason = reason
        self.status = status
        self.verb = verb
        self.resource = resource
        self.group = group
        self.namespace = namespace
        self.user = user
        super().__init__(message)


class LocalRunError(RuntimeError):
    """Raised when a local run of a job (:func:`hera_volcano.run_local`) fails: a rank exited with an error, the run
    outlasted its timeout, or rank 0's report could not be read. Every process of the run has ended by then.

    :param message: what failed, in one line.
    :param rank: the rank that failed first (None: none in particular, such as a timeout).
    :param exit_code: its exit status (a negative number: killed by that signal).
    :param lines: its last lines of error output, oldest first.
    :param timed_out: whether the run outlasted its timeout.
    :param outputs: a local sweep's outputs that remain when it fails (``trials``: each trial and why it failed).
    """

    def __init__(
        self,
        message: str,
        *,
        rank: int | None = None,
        exit_code: int | None = None,
        lines: tuple[str, ...] = (),
        timed_out: bool = False,
        outputs: Mapping[str, str] | None = None,
    ) -> None:
        self.rank = rank
        self.exit_code = exit_code
        self.lines = lines
        self.timed_out = timed_out
        self.outputs = dict(outputs or {})
        super().__init__(message)
