"""What the stand-in API server (``recorded.World``) can be told to do wrong, in the shapes the client meets on a real
one: an error answer (the API server's ``Status`` body, as in ``fixtures/errors/``, or a proxy's plain text), no
answer at all, an exception from the client library, an answer that comes late, and a stream (a watch, a log) that
the server ends, that breaks, or that ends with an ``ERROR`` event.

A test queues faults with ``World.fault(verb, resource, *faults)``: each of the next calls meets one, in order.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    """A ``Status`` object as the API server writes one with an error answer or in a watch's ERROR event."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


#: The answer to a watch from a version the server no longer has (etcd compacted it, or the watch cache moved on).
EXPIRED = status(410, "Expired", "too old resource version: 101 (2050)")
#: The API server overloaded, restarting, or behind a load balancer that lost it: worth another try.
UNAVAILABLE = status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
INTERNAL = status(500, "InternalError", 'an error on the server ("etcdserver: request timed out") has prevented it')
TOO_MANY = status(429, "TooManyRequests", "Too many requests, please try again later.")


@dataclass(frozen=True)
class Answer:
    """The call is answered with HTTP ``code`` and ``body`` (a ``Status`` object, or a proxy's page); a recorded
    answer of ``fixtures/errors/`` is ``Answer(*recorded.error(NAME))``."""

    code: int
    body: str

    @classmethod
    def of(cls, obj: dict[str, Any]) -> Answer:
        return cls(int(obj["code"]), json.dumps(obj))


@dataclass(frozen=True)
class Unreachable:
    """No answer: the connection is refused (the API server restarting, the network down)."""


@dataclass(frozen=True)
class Raise:
    """The client library raises something other than a ClusterError (a bug, an answer it cannot read)."""

    exception: BaseException


@dataclass
class Slow:
    """The call answers only once the test sets ``release`` (or after ``limit`` seconds, so that a test that forgets
    does not hang); ``entered`` is set when the call has begun."""

    limit: float = 30.0
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def wait_entered(self, timeout: float = 10) -> None:
        assert self.entered.wait(timeout), "the slow call was never made"


@dataclass(frozen=True)
class End:
    """The server ends the stream after ``after`` events or lines: a watch's timeout, a log stream it closed."""

    after: int = 0


@dataclass(frozen=True)
class Drop:
    """The connection breaks after ``after`` events or lines: the read fails, as ``kubeapi.Stream`` reports it."""

    after: int = 0


@dataclass(frozen=True)
class ErrorEvent:
    """After ``after`` events, a watch ``ERROR`` event carrying ``status``; the server then ends the watch."""

    status: dict[str, Any]
    after: int = 0


#: Faults of the call itself, and faults of the stream a watch or log call returns.
CallFault = Answer | Unreachable | Raise | Slow
StreamFault = End | Drop | ErrorEvent
Fault = CallFault | StreamFault
