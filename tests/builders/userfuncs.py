"""Functions that jobs run in the tests, as users write them: at a module's top level, importing what they use."""

from __future__ import annotations


def echo(**kwargs: object) -> dict[str, object]:
    """Reports its arguments, and the environment variables named in ``env`` (what the process saw)."""
    import os

    names = kwargs.pop("env", [])
    assert isinstance(names, list)
    return {"args": kwargs, "env": {name: os.environ.get(name) for name in names}}


def whoami() -> dict[str, object]:
    """Reports the ranks torchrun or Open MPI gave this process (only global rank 0's report is printed)."""
    import os

    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "VC_TASK_INDEX")
    return {"seen": {k: os.environ[k] for k in keys if k in os.environ}}


def braces_and_dollars() -> dict[str, list[str]]:
    """Source text Argo and Kubernetes would change if it were not escaped (reported as JSON, whose '{{' the
    launcher escapes: a text report holding it is refused)."""
    return {"text": [f"{{{{inputs.parameters.x}}}} $(HOME) $$ {'{'}{'{'}"]}


def fails(message: str) -> None:
    raise RuntimeError(message)


def typed(lr: float, epochs: int = 1, tag: str = "") -> dict[str, float | str]:
    return {"loss": lr / epochs, "tag": tag}
