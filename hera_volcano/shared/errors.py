"""The one error type users catch: bad input, named by field and rule."""

from __future__ import annotations


class ValidationError(ValueError):
    """Raised when input breaks a Kubernetes, Volcano or Argo rule.

    ``field`` is the path of the offending value (``spec.tasks[1].replicas``), ``rule`` says what it must be,
    so the message can be shown to a user as one line without a traceback.
    """

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")
