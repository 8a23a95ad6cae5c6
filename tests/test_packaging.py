"""The package as users get it: the wheel and sdist hold every file of the source tree, and the wheel, installed
into a fresh virtual environment (its dependencies from PyPI, at the tested pins), runs.

One wheel is built per session, with the pinned setuptools (``--no-isolation``), as ``make check`` builds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import hera_volcano
from tests.conftest import ROOT


@dataclass(frozen=True)
class Built:
    wheel: Path
    sdist: Path


#: What a checkout holds beside its sources: caches, environments and earlier builds.
NOT_SOURCES = (".git", ".venv", ".cache", "build", "dist", "site", "*.egg-info", "__pycache__", ".*_cache")


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("dist")
    # From a copy of the tree: `python -m build` writes build/ and the egg-info into the tree it builds, and make
    # unit runs on every core (another worker, or make check, may be building the same tree).
    tree = tmp_path_factory.mktemp("tree") / "hera-volcano"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    made = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--quiet", "--outdir", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, f"python -m build failed:\n{made.stdout[-3000:]}\n{made.stderr[-3000:]}"
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    return Built(wheel, sdist)


def source_files() -> set[str]:
    """Every file under hera_volcano/ that git tracks or would track (so a new, uncommitted file counts too)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "hera_volcano"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return {path for path in listed if (ROOT / path).is_file()}


def test_the_wheel_holds_every_file_of_the_source_tree(built: Built) -> None:
    files = source_files()
    assert "hera_volcano/py.typed" in files and "hera_volcano/kube/pod_fields.json" in files
    with zipfile.ZipFile(built.wheel) as wheel:
        names = set(wheel.namelist())
    missing = sorted(files - names)
    assert not missing, f"not in the wheel (add a pattern to [tool.setuptools.package-data]): {missing}"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_sdist_holds_every_file_of_the_source_tree_and_the_license(built: Built) -> None:
    with tarfile.open(built.sdist) as sdist:
        names = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    missing = sorted(source_files() - names)
    assert not missing, f"not in the sdist: {missing}"
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names


def test_the_distributions_carry_the_package_version(built: Built) -> None:
    version = hera_volcano.__version__
    assert built.wheel.name == f"hera_volcano-{version}-py3-none-any.whl"
    assert built.sdist.name == f"hera_volcano-{version}.tar.gz"
    with zipfile.ZipFile(built.wheel) as wheel:
        metadata = wheel.read(f"hera_volcano-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata
    assert "\nLicense-Expression: Apache-2.0\n" in metadata


def test_the_wheel_installs_into_a_fresh_venv_and_runs(built: Built, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, command = venv / "bin" / "python", venv / "bin" / "hera-volcano"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(built.wheel), "-c", str(ROOT / "constraints.txt")], check=True, timeout=600)
    elsewhere = {**os.environ, "PYTHONPATH": ""}  # nothing from this checkout: only what the wheel installed
    version = subprocess.run(
        [str(command), "--version"], capture_output=True, text=True, cwd=tmp_path, env=elsewhere, timeout=120
    )
    assert (version.returncode, version.stdout, version.stderr) == (0, f"hera-volcano {hera_volcano.__version__}\n", "")
    hello = subprocess.run(
        [str(python), "-m", "hera_volcano.mpi_hello"], capture_output=True, text=True, cwd=tmp_path, env=elsewhere
    )
    assert hello.returncode == 0 and hello.stderr == "", hello.stderr
    workflow = yaml.safe_load(hello.stdout)
    assert workflow["kind"] == "Workflow" and workflow["metadata"]["generateName"] == "volcano-mpi-hello-"
    where = subprocess.run(
        [str(python), "-c", "import hera_volcano; print(hera_volcano.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=elsewhere,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(venv), "the installed wheel, not this checkout"
