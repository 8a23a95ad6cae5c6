"""The test cluster's images (cluster/images/build.py): the library's default images are built under exactly their
names, so the rendered workflows run unmodified, and each lock is generated from its image's packages."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hera_volcano.kube.images import PYTHON_IMAGE
from tests.conftest import ROOT


def _load_build() -> ModuleType:
    # Loaded under its own name: `build` is also the packaging tool's module.
    spec = importlib.util.spec_from_file_location("cluster_images_build", ROOT / "cluster/images/build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


build = _load_build()


def test_the_cluster_builds_the_default_image_under_its_name() -> None:
    built = {build.normalized(i.name) for i in build.images(["v4.1.4"])}
    assert build.normalized(PYTHON_IMAGE) in built


def test_the_python_image_has_the_standard_library_not_only_python3_minimal() -> None:
    (python,) = [i for i in build.images(()) if build.normalized(i.name) == build.normalized(PYTHON_IMAGE)]
    pinned = {row[0] for row in build.read_lock(python.lock)}
    assert {"python3-minimal", "libpython3.11-stdlib", "libssl3"} <= pinned
    assert python.cmd == ("python3",)


def test_each_lock_pins_the_closure_of_its_images_packages() -> None:
    roots = {i.lock: i.packages for i in build.images(()) if i.lock}
    locks = {path.stem for path in (ROOT / "cluster/images").glob("*.lock")}
    assert locks == set(roots) | set(build.BUILD_LOCKS)
    for lock, packages in roots.items():
        header = (ROOT / f"cluster/images/{lock}.lock").read_text().splitlines()[0]
        assert header.endswith(f"the closure of {' '.join(packages)}."), f"{lock}.lock: run build.py --lock {lock}"


def test_a_default_image_the_library_no_longer_defines_stops_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images = tmp_path / "images.py"
    images.write_text('KUBECTL_IMAGE = "alpine/k8s:1.37.2"\nPYTHON_IMAGE_NAME = "python:3.12-slim"\n')
    monkeypatch.setattr(build, "LIBRARY_IMAGES", images)
    assert build.library_image("KUBECTL_IMAGE") == "alpine/k8s:1.37.2"
    with pytest.raises(build.BuildError, match="no PYTHON_IMAGE"):
        build.library_image("PYTHON_IMAGE")
