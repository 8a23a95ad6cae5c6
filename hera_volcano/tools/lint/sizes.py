"""How big a workflow object is where it is stored: as JSON in etcd.

The API server refuses an object over etcd's request limit (1.5 MiB by default: "etcdserver: request is too
large"). Well below that, Argo's controller fails a Workflow whose JSON, its node status compressed, passes 1 MiB
(``MAX_WORKFLOW_SIZE``), and a Workflow started from a template keeps a copy of the template's spec in its status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Final

from hera_volcano.shared.findings import Finding, error, warning

KIB: Final = 1024
MIB: Final = 1024 * KIB
#: From this size on, a workflow object is reported as large.
WARN_BYTES: Final = 512 * KIB
#: etcd's default request limit: the API server refuses a larger object.
MAX_BYTES: Final = 3 * MIB // 2
#: What Go's JSON encoder (the API server's) writes as a six-byte ``\u00XX`` escape instead of the one character.
_HTML_ESCAPED: Final = ("<", ">", "&")


def stored_size(doc: Mapping[str, object]) -> int:
    """The bytes of ``doc`` as compact JSON, as the API server writes it (UTF-8, with ``<``, ``>`` and ``&``
    escaped). A key JSON has no form for (``!!binary``) is left out, a lone surrogate counted as the three bytes of
    its replacement; what the text may stand for is bounded by the loader's budget (``kube.loading.byte_limit``)."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, default=str, skipkeys=True)
    return len(text.encode("utf-8", "surrogatepass")) + 5 * sum(text.count(c) for c in _HTML_ESCAPED)


def check_size(doc: Mapping[str, object], kind: str) -> Iterator[Finding]:
    """A warning for a large workflow object, an error for one the API server refuses."""
    size = stored_size(doc)
    if size > MAX_BYTES:
        yield error(
            "",
            f"is {size / MIB:.2f} MiB as JSON: the API server refuses a {kind} over etcd's default limit of 1.5 MiB"
            " (etcdserver: request is too large); move large scripts or data into an image, a ConfigMap or an"
            " artifact",
        )
    elif size >= WARN_BYTES:
        yield warning(
            "",
            f"is {size // KIB} KiB as JSON: Argo fails a workflow whose JSON passes 1 MiB with its status (a"
            f" workflow started from a template also holds a copy of it), and etcd refuses objects over 1.5 MiB;"
            " move large scripts or data into an image, a ConfigMap or an artifact",
        )
