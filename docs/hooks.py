"""MkDocs hooks (mkdocs.yml ``hooks:``): the docstrings' Sphinx roles, shown as code in the API reference.

The docstrings cross-reference with Sphinx roles (:class:`Result`, :func:`~hera_volcano.job_template`), which
mkdocstrings leaves as text: ``:class:`` followed by the name in code. The role goes; a leading ``~`` keeps the last
part of the dotted name, as Sphinx shows it.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):<code>(~?)([\w.]+)</code>")


def _shown(m: re.Match[str]) -> str:
    name = m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2)
    return f"<code>{name}</code>"


def on_page_content(html: str, **_: Any) -> str:
    """The page's HTML with each role replaced by its name in code."""
    return _ROLE.sub(_shown, html)
