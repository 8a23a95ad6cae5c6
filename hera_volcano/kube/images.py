"""Container image references, checked against the reference grammar the kubelet parses them with (the
``distribution/reference`` grammar), so a reference it would refuse (``InvalidImageName``) is refused here first."""

from __future__ import annotations

import re
from typing import Final

from hera_volcano.shared.errors import ValidationError

# The grammar: [host[:port]/]path-component[/path-component...][:tag][@digest]. A host is dot-separated labels of
# letters, digits and inner hyphens (or an IPv6 address in brackets); repository path components are lowercase
# letters and digits joined by ".", "_", "__" or hyphens; a tag is at most 128 word characters, dots and hyphens,
# not starting with either; a digest is an algorithm (letters and digits joined by + . _ -) and 32 or more hex digits.
_HOST = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[a-fA-F0-9:]+\])"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = rf"(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE: Final = re.compile(rf"(?P<name>{_NAME})(?::{_TAG})?(?:@{_DIGEST})?", re.ASCII)
#: The longest repository name (host and path) the grammar allows.
NAME_MAX: Final = 255


def image_problem(image: object) -> str | None:
    """What is wrong with ``image`` as an image reference, or None; the rule says which part breaks it."""
    if not isinstance(image, str) or not image.strip():
        return "must not be empty"
    match = _REFERENCE.fullmatch(image)  # fullmatch: `$` alone would let a final newline in
    if match is None:
        if _REFERENCE.fullmatch(_lower_path(image)):
            return (
                f"must be a lowercase repository name, got {image!r}: the kubelet refuses uppercase letters in an"
                " image's path (InvalidImageName)"
            )
        return f"must be an image reference [host[:port]/]path[:tag][@digest] (the path lowercase), got {image!r}"
    if len(match["name"]) > NAME_MAX:
        return f"must have a repository name of at most {NAME_MAX} characters, got {len(match['name'])}"
    if re.fullmatch(r"[a-f0-9]{64}", match["name"]):
        return f"must not be a bare 64-hex-digit identifier as a repository name, got {image!r}"
    return None


def _lower_path(image: str) -> str:
    """``image`` with its repository path (not its host, tag or digest) in lowercase: to tell case apart."""
    rest, at, digest = image.partition("@")
    first, slash, path = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        host, rest = first + "/", path
    else:
        host = ""
    name, colon, tag = rest.rpartition(":") if ":" in rest.rsplit("/", 1)[-1] else (rest, "", "")
    return f"{host}{name.lower()}{colon}{tag}{at}{digest}"


def check_image(image: str, field: str) -> None:
    """Raise :class:`ValidationError` unless ``image`` is an image reference the kubelet accepts."""
    problem = image_problem(image)
    if problem:
        raise ValidationError(field, problem)


#: Python image for our programs in pods, the log follower and the MPI master's wait for its workers (hera_volcano/pods,
#: standard library only, run as ``python3 -c``): the Docker Hub official image, multi-arch, its 3.11 line the one
#: Debian 12 ships (what the test cluster builds). ``follower_image=`` (``--follower-image``; ``mpi_job``'s too)
#: picks another; it needs ``python3`` (3.10 or later) with its standard library (ssl, http.client,
#: json), no packages and no CA bundle of its own (the service account's is mounted).
PYTHON_IMAGE = "python:3.11-slim"
