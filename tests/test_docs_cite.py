"""What the README and docs/ cite of the package exists: each module path (``hera_volcano.x.y``, ``kube/values``),
each file path (``hera_volcano/pods/run.py``), each name imported (``from hera_volcano import X``), and each module
docs/architecture.md names in a layer's line. A rename that forgets a page fails here, not in a reader's hands.

docs/changelog.md is left out: it names old modules on purpose, to say where they went."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from tests.doc_blocks import PAGES, ROOT

PACKAGE = ROOT / "hera_volcano"
CITING = [page for page in PAGES if page.name != "changelog.md"]
LAYERS = ("pods", "shared", "kube", "volcano", "argo", "client", "builders", "examples", "tools", "cli")
#: Written in the docs as a pattern, not a name: ``::: hera_volcano.NAME`` for each public name.
PATTERNS = {"hera_volcano.NAME"}
#: Kubernetes subresources (``pods/log``), which read like a layer's module.
SUBRESOURCES = {"log", "exec", "attach", "portforward", "status", "eviction", "binding"}

DOTTED = re.compile(r"(?<![\w.])hera_volcano((?:\.\w+)+)((?:\|\w+)*)")
IMPORT = re.compile(r"from (hera_volcano(?:\.\w+)*) import (\([^)]*\)|[\w, ]+)")
FILE = re.compile(r"(?<![\w/.-])hera_volcano/([\w/]*\w(?:\.(?:py|json|sh))?)")
#: A layer's module, quoted (```kube/values```, ```kube/values.expression```): unquoted, ``argo/default`` is an account.
IN_LAYER = re.compile(rf"`({'|'.join(LAYERS)})/(\w+)(?:\.(py|json|sh)|\.(\w+))?/?`")
#: A layer's file, quoted or not (``pods/launcher.py``; not ``tests/pods/x.py``).
LAYER_FILE = re.compile(rf"(?<![\w/.-])((?:{'|'.join(LAYERS)})/[\w/]*\w\.(?:py|json|sh))\b")
#: Quoted in docs/architecture.md's lines of layers, and not modules: a namespace, a package.
NOT_MODULES = {"argo", "kubernetes"}


def exists(dotted: str) -> bool:
    """``dotted`` is a module of the package, or a name (attribute chain) in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:cut])) is not None
        except ModuleNotFoundError:  # a parent that is a module, not a package
            found = False
        if found:
            break
    else:
        return False
    value: object = importlib.import_module(".".join(parts[:cut]))
    for name in parts[cut:]:
        if not hasattr(value, name):
            return False
        value = getattr(value, name)
    return True


def cited_dotted(text: str) -> set[str]:
    """``hera_volcano.a.b`` and ``python -m hera_volcano.a|b|c`` (each alternative), as dotted paths."""
    cited = set()
    for m in DOTTED.finditer(text):
        path = "hera_volcano" + m.group(1).rstrip(".")
        cited.add(path)
        for alternative in m.group(2).split("|")[1:]:
            cited.add(path.rsplit(".", 1)[0] + "." + alternative)
    return cited - PATTERNS


def cited_imports(text: str) -> set[str]:
    return {
        f"{m.group(1)}.{name.strip()}"
        for m in IMPORT.finditer(text)
        for name in m.group(2).strip("()").split(",")
        if name.strip()
    }


def cited_files(text: str) -> set[str]:
    """``hera_volcano/a/b.py`` and a layer's ``a/b.py``, as paths under the package."""
    files = {m.group(1).rstrip("/") for m in FILE.finditer(text)} | set(LAYER_FILE.findall(text))
    for m in IN_LAYER.finditer(text):
        layer, name, suffix, _ = m.groups()
        if suffix or not (layer == "pods" and name in SUBRESOURCES):
            files.add(f"{layer}/{name}.{suffix}" if suffix else f"{layer}/{name}")
    return files


def cited_in_layer(text: str) -> set[str]:
    """A layer's ``a/b.c`` (a name in a module, as docs/design.md writes ``kube/values.expression``)."""
    return {f"hera_volcano.{m.group(1)}.{m.group(2)}.{m.group(4)}" for m in IN_LAYER.finditer(text) if m.group(4)}


def file_exists(path: str) -> bool:
    """``path`` under the package is a file, a folder, or (written without ``.py``) a module."""
    return (PACKAGE / path).exists() or (PACKAGE / f"{path}.py").is_file()


def pages() -> list[Path]:
    return CITING


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_and_name_a_page_cites_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = sorted(d for d in cited_dotted(text) | cited_imports(text) | cited_in_layer(text) if not exists(d))
    assert missing == [], f"{page.relative_to(ROOT)} cites what the package does not have"


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_page_cites_exists(page: Path) -> None:
    missing = sorted(f for f in cited_files(page.read_text(encoding="utf-8")) if not file_exists(f))
    assert missing == [], f"{page.relative_to(ROOT)} cites files hera_volcano/ does not have"


def architecture_layers() -> dict[str, list[str]]:
    """docs/architecture.md's line of each layer (``- `kube/`: ...``, continued until the next bullet) and the
    lower-case words it quotes: the modules it names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    layers = {}
    for m in re.finditer(r"^- `(\w+)/`(.*?)(?=^- |^$)", text, re.MULTILINE | re.DOTALL):
        layers[m.group(1)] = [w for w in re.findall(r"`([a-z_]+)`", m.group(2)) if w not in NOT_MODULES]
    return layers


def test_the_architecture_page_has_a_line_for_each_layer_and_names_only_modules_it_has() -> None:
    layers = architecture_layers()
    assert sorted(layers) == sorted(LAYERS)
    missing = {layer: [name for name in names if not file_exists(f"{layer}/{name}")] for layer, names in layers.items()}
    assert {layer: names for layer, names in missing.items() if names} == {}


def test_the_finders_find_what_a_page_writes() -> None:
    """The patterns above catch each way the pages cite, so a test that finds nothing missing has looked."""
    text = (
        "`python -m hera_volcano.mpi_hello|dag` and `hera_volcano.kube.values`. "
        "from hera_volcano import (Run, Client) in `hera_volcano/pods/run.py`, `pods/follow` and "
        "`kube/values.expression`, "
        "RBAC on `pods/log`; tests/pods/x.py is a test, pods/launcher.py a file, argo/default an account."
    )
    assert cited_dotted(text) == {"hera_volcano.mpi_hello", "hera_volcano.dag", "hera_volcano.kube.values"}
    assert cited_imports(text) == {"hera_volcano.Run", "hera_volcano.Client"}
    assert cited_files(text) == {"pods/run.py", "pods/follow", "kube/values", "pods/launcher.py"}
    assert cited_in_layer(text) == {"hera_volcano.kube.values.expression"}
    assert exists("hera_volcano.kube.values.expression") and exists("hera_volcano.Run")
    assert not exists("hera_volcano.kube.gone") and not exists("hera_volcano.kube.values.gone")
    assert file_exists("pods/follow") and file_exists("tools/lint") and not file_exists("builders/retries")
