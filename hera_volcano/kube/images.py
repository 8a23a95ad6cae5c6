"""Container image references, checked before they reach a manifest or a script."""

from __future__ import annotations

import re

from hera_volcano.shared.errors import ValidationError

# A registry/name[:tag][@digest] reference: no spaces, quotes, braces or shell metacharacters can slip through.
_IMAGE = re.compile(
    r"^[a-zA-Z0-9][a-zA-Z0-9._-]*(?::[0-9]+)?(?:/[a-zA-Z0-9][a-zA-Z0-9._-]*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+:[a-fA-F0-9]{32,})?$"
)


def check_image(image: str, field: str) -> None:
    """Raise :class:`ValidationError` unless ``image`` is a plausible image reference."""
    if not isinstance(image, str) or not image.strip():
        raise ValidationError(field, "must not be empty")
    if not _IMAGE.fullmatch(image) or len(image) > 4096:  # fullmatch: `$` alone would let a final newline in
        raise ValidationError(field, "must be a container image reference such as registry/name:tag")


#: kubectl image for the log follower and the master's wait for workers: multi-arch (amd64, arm64), with bash, its
#: kubectl of a Kubernetes minor still supported (Volcano's Argo example uses kubectl 1.26, eleven minors older).
#: ``kubectl_image=`` (``--kubectl-image``) picks another; it needs bash, kubectl and sleep.
KUBECTL_IMAGE = "alpine/k8s:1.37.2"
