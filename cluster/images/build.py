#!/usr/bin/env python3
"""Builds the container images the test cluster runs, without a registry or a container engine.

No registry is reachable, so every image the rendered workflows name is made here, under that exact name, from
pinned Debian packages (``*.lock`` beside this file: name, version, SHA-256 of each .deb) and from binaries this
project builds. Each image is one layer, written as an OCI image archive (``index.json``, ``oci-layout``,
``blobs/``) that ``ctr images import`` reads; the ``io.containerd.image.name`` annotation gives the name.

Packages are unpacked with ``dpkg-deb -x``, so no maintainer script runs: what those scripts would set up (users,
``sshd_config``, host keys, alternatives, the dynamic linker's cache) each recipe does itself. The layer is a
tar with sorted entries and fixed times, so the same inputs give the same image digest; an archive is rebuilt only
when the stamp of its inputs changes.

    build.py --out DIR --debs DIR --bin DIR --argo DIR --kube-source DIR   build every image (no-op when current)
    build.py --lock IMAGE...                                                rewrite IMAGE.lock from Debian's index
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MULTIARCH = "usr/lib/x86_64-linux-gnu"
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class BuildError(RuntimeError):
    """An image could not be built; the message says which and why."""


@dataclass(frozen=True)
class Inputs:
    """Where the recipes find what they put into images."""

    debs: Path  # downloaded .deb files (a cache)
    bin: Path  # Kubernetes binaries (kubectl)
    argo: Path  # argo/VERSION/argoexec
    kube_source: Path  # the k8s.io/kubernetes module (build/pause/linux/pause.c)


@dataclass
class Image:
    """One image: its name, the Debian packages of its root filesystem, and what the recipe adds."""

    name: str
    packages: tuple[str, ...] = ()  # roots of the dependency closure written to LOCK.lock
    lock: str = ""  # lock file name (without .lock); images may share one
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    workdir: str = ""
    recipe: Callable[[Path, Inputs], None] | None = None
    files: Callable[[Inputs], Iterable[Path]] = lambda inputs: ()  # inputs outside the lock, for the stamp
    env: tuple[str, ...] = (PATH_ENV,)
    labels: dict[str, str] = field(default_factory=dict)


def run(*argv: str | Path, cwd: Path | None = None) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(map(str, argv))} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return proc.stdout


# ---------------------------------------------------------------------------------------------- Debian packages


def read_lock(name: str) -> list[tuple[str, str, str]]:
    path = HERE / f"{name}.lock"
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, version, sha256 = line.split()
            rows.append((package, version, sha256))
    return rows


def fetch_debs(lock: str, cache: Path) -> list[Path]:
    """The lock's .deb files, downloaded once into ``cache`` (apt-get download), each checked against its hash."""
    cache.mkdir(parents=True, exist_ok=True)
    rows = read_lock(lock)
    paths, missing = [], []
    for package, version, sha256 in rows:
        path = cache / f"{package}_{version.replace(':', '%3a')}_{sha256[:16]}.deb"
        paths.append(path)
        if not path.is_file():
            missing.append((package, version, sha256, path))
    if missing:
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            wanted = [f"{p}={v}" for p, v, _, _ in missing]
            try:
                run("apt-get", "download", "-qq", *wanted, cwd=Path(tmp))
            except BuildError:
                run("apt-get", "update", "-qq")
                run("apt-get", "download", "-qq", *wanted, cwd=Path(tmp))
            for package, version, sha256, path in missing:
                found = list(Path(tmp).glob(f"{package}_{version.replace(':', '%3a')}_*.deb"))
                if len(found) != 1:
                    raise BuildError(f"apt-get download {package}={version} gave {found}")
                digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
                if digest != sha256:
                    raise BuildError(f"{found[0].name} has SHA-256 {digest}, {lock}.lock pins {sha256}")
                found[0].rename(path)
    return paths


def write_lock(lock: str, packages: tuple[str, ...], closure: bool = True) -> None:
    """Pin each .deb of ``packages`` (with ``closure``: and of everything they need, resolved as apt would on an
    empty system) by version and hash."""
    if not closure:
        out = "".join(
            f"'uri' {p}_{run('apt-cache', 'policy', p).split('Candidate:')[1].split()[0]}_amd64.deb\n" for p in packages
        )
        return _write_lock_rows(lock, packages, out, "exactly")
    with tempfile.NamedTemporaryFile() as status:
        out = run(
            "apt-get", "install", "--print-uris", "-qq", "-o", f"Dir::State::status={status.name}",
            "-o", "APT::Install-Recommends=false", *packages,
        )  # fmt: skip
    _write_lock_rows(lock, packages, out, "the closure of")


def _write_lock_rows(lock: str, packages: tuple[str, ...], out: str, what: str) -> None:
    rows = []
    for line in out.splitlines():
        filename = line.split()[1]  # 'URI' NAME_VERSION_ARCH.deb SIZE HASH
        package, version = filename.split("_")[:2]
        version = version.replace("%3a", ":")
        shown = run("apt-cache", "show", f"{package}={version}")
        sha256 = next(x.split()[1] for x in shown.splitlines() if x.startswith("SHA256:"))
        rows.append(f"{package} {version} {sha256}")
    header = f"# Generated by cluster/images/build.py --lock {lock}: {what} {' '.join(packages)}.\n"
    (HERE / f"{lock}.lock").write_text(header + "\n".join(sorted(rows)) + "\n")


def unpack(debs: Iterable[Path], root: Path) -> None:
    for deb in debs:
        run("dpkg-deb", "-x", deb, root)


# ---------------------------------------------------------------------------------------------- recipes


def _write(root: Path, path: str, text: str, mode: int = 0o644) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    target.chmod(mode)


def _users(root: Path, extra_passwd: str = "", extra_group: str = "") -> None:
    """What base-passwd and adduser would write: root, nobody, and the image's own system users."""
    _write(
        root, "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n" + extra_passwd + "nobody:x:65534:65534::/:/bin/false\n"
    )
    _write(root, "etc/group", "root:x:0:\n" + extra_group + "nogroup:x:65534:\n")
    _write(root, "etc/shadow", "root:*:20000:0:99999:7:::\n", 0o640)
    for d in ("tmp", "var/tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d).chmod(0o1777)
    # What base-files' postinst sets up: /var/run is /run (sshd's privilege separation directory lives there).
    (root / "run").mkdir(exist_ok=True)
    var_run = root / "var/run"
    if var_run.is_dir() and not var_run.is_symlink():
        shutil.rmtree(var_run)
    if not var_run.is_symlink():
        var_run.parent.mkdir(parents=True, exist_ok=True)
        var_run.symlink_to("/run")
    (root / "root").mkdir(exist_ok=True)
    (root / "root").chmod(0o700)


def _busybox_applets(root: Path) -> None:
    """Symlinks for busybox's applets, where no real program of that name is installed."""
    applets = run(root / "bin/busybox", "--list-full").split()
    for applet in applets:
        link = root / applet
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")


def _ldconfig(root: Path) -> None:
    run("ldconfig", "-r", root)


def _copy_binary(source: Path, root: Path, path: str) -> None:
    if not source.is_file():
        raise BuildError(f"{source} is missing: build it first (cluster/build.sh)")
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    target.chmod(0o755)


def pause_recipe(root: Path, inputs: Inputs) -> None:
    source = inputs.kube_source / "build/pause/linux/pause.c"
    run("gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v3.10.2-hera-volcano", "-o", root / "pause", source)
    run("strip", root / "pause")


def busybox_recipe(root: Path, inputs: Inputs) -> None:
    _busybox_applets(root)
    _users(root)


def kubectl_recipe(root: Path, inputs: Inputs) -> None:
    _busybox_applets(root)
    _users(root)
    _ldconfig(root)
    _copy_binary(inputs.bin / "kubectl", root, "usr/local/bin/kubectl")


def argoexec_recipe(version: str) -> Callable[[Path, Inputs], None]:
    def recipe(root: Path, inputs: Inputs) -> None:
        _busybox_applets(root)
        _users(root, "8737:x:8737:8737::/home/argo:/bin/sh\n", "8737:x:8737:\n")
        _copy_binary(inputs.argo / version / "argoexec", root, "bin/argoexec")
        _copy_binary(inputs.bin / "kubectl", root, "bin/kubectl")

    return recipe


LIBRARY_IMAGES = HERE.parents[1] / "hera_volcano/kube/images.py"


def library_image(constant: str) -> str:
    """The image the library names by default (``constant`` in hera_volcano/kube/images.py), read rather than
    imported: this script runs on the host's Python, without the project's dependencies."""
    for node in ast.parse(LIBRARY_IMAGES.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == [constant]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise BuildError(f"{LIBRARY_IMAGES} has no {constant} = '...'")


MPI_HELLO = HERE / "mpi_hello_world.c"
#: The PyTorch example's image (hera_volcano.examples): Debian's torch 1.13 (CPU) stands in for it here.
PYTORCH_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def mpi_recipe(root: Path, inputs: Inputs) -> None:
    """Volcano's example MPI image, rebuilt: Open MPI, an ssh server and client, ``mpi_hello_world`` in PATH, and
    Python with mpi4py (for Python functions as MPI jobs)."""
    _users(root, "sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n")
    # What openssh-server's postinst does: the default configuration and host keys. Keys are made at build time,
    # as a `RUN apt-get install openssh-server` bakes them into an image.
    # PAM is off: its stack (/etc/pam.d/common-*) is what libpam-runtime's postinst would generate, and without it
    # sshd closes every connection. Key authentication, as Volcano's ssh plugin sets up, needs no PAM.
    config = (root / "usr/share/openssh/sshd_config").read_text()
    if "\nUsePAM yes\n" not in config:
        raise BuildError("openssh-server's default sshd_config no longer says `UsePAM yes`")
    _write(root, "etc/ssh/sshd_config", config.replace("\nUsePAM yes\n", "\nUsePAM no\n"))
    run("ssh-keygen", "-A", "-f", root)
    # What openmpi-bin's postinst does through update-alternatives.
    for tool in ("mpirun", "mpiexec"):
        link = root / "usr/bin" / tool
        if not link.exists():
            link.symlink_to(f"{tool}.openmpi")
    _ldconfig(root)
    # Compiled here against the image's own Open MPI (headers from libopenmpi-dev, unpacked aside, not installed).
    with tempfile.TemporaryDirectory() as tmp:
        unpack(fetch_debs("mpi-build", inputs.debs), Path(tmp))
        include = Path(tmp) / MULTIARCH / "openmpi/include"
        libdir = root / MULTIARCH
        run(
            "gcc", "-O2", "-I", include, "-o", root / "home/mpi_hello_world", MPI_HELLO,
            libdir / "libmpi.so.40", f"-Wl,-rpath-link,{libdir}",
        )  # fmt: skip
    (root / "usr/local/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/local/bin/mpi_hello_world").symlink_to("/home/mpi_hello_world")


def _library_alternatives(root: Path, *names: str) -> None:
    """What update-alternatives does for BLAS and LAPACK: the libraries of ``MULTIARCH/NAME/`` linked beside it."""
    libdir = root / MULTIARCH
    for name in names:
        for library in sorted((libdir / name).glob("lib*.so*")):
            link = libdir / library.name
            if not link.exists() and not link.is_symlink():
                link.symlink_to(f"{name}/{library.name}")


def pytorch_recipe(root: Path, inputs: Inputs) -> None:
    """PyTorch (CPU, with gloo for torch.distributed) and torchrun on Debian's Python."""
    _users(root)
    _library_alternatives(root, "blas", "lapack")
    _ldconfig(root)


def python_recipe(root: Path, inputs: Inputs) -> None:
    """Debian's Python 3.11 with its standard library (ssl, http.client, json...) and sh, standing in for the
    official slim image: what the follower's and the MPI master's stdlib-only scripts need."""
    _users(root)
    _ldconfig(root)


def _argoexec_files(version: str) -> Callable[[Inputs], Iterable[Path]]:
    return lambda inputs: (inputs.argo / version / "argoexec", inputs.bin / "kubectl")


def images(argo_versions: Iterable[str]) -> list[Image]:
    result = [
        Image(
            name="registry.k8s.io/pause:3.10.2",
            entrypoint=("/pause",),
            recipe=pause_recipe,
            files=lambda inputs: (inputs.kube_source / "build/pause/linux/pause.c",),
        ),
        Image(name="busybox:1.37.0", packages=("busybox-static",), lock="busybox", cmd=("sh",), recipe=busybox_recipe),
        *(
            Image(
                name=name,
                packages=("busybox-static", "bash"),
                lock="kubectl",
                entrypoint=("kubectl",),
                recipe=kubectl_recipe,
                files=lambda inputs: (inputs.bin / "kubectl",),
            )
            # The tests' kubectl probes', and the one Volcano's upstream example names (the side-by-side tests).
            for name in ("docker.io/alpine/k8s:1.37.2", "mcr.microsoft.com/oss/kubernetes/kubectl:v1.26.3")
        ),
        Image(
            name="volcanosh/example-mpi:0.0.3",
            packages=(
                "openmpi-bin",
                "libopenmpi3",
                "libpsm-infinipath1",
                "python3",
                "python3-mpi4py",
                "openssh-server",
                "openssh-client",
                "dash",
                "bash",
                "coreutils",
                "grep",
                "sed",
                "libc-bin",
                "base-files",
            ),
            lock="mpi",
            cmd=("/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd -D"),
            workdir="/home",
            recipe=mpi_recipe,
            files=lambda inputs: (MPI_HELLO, HERE / "mpi-build.lock"),
        ),
        Image(
            name=PYTORCH_IMAGE,
            packages=(
                "python3-torch",
                "python3",
                "python-is-python3",
                "bash",
                "dash",
                "coreutils",
                "base-files",
                "libc-bin",
            ),
            lock="pytorch",
            cmd=("python3",),
            recipe=pytorch_recipe,
        ),
        Image(
            # python3-minimal alone lacks json, http and email (http.client's headers): libpython3.11-stdlib has them.
            name=library_image("PYTHON_IMAGE"),
            packages=("python3-minimal", "libpython3.11-stdlib", "dash"),
            lock="python",
            cmd=("python3",),
            env=(PATH_ENV, "LANG=C.UTF-8"),
            recipe=python_recipe,
        ),
    ]
    for version in argo_versions:
        result.append(
            Image(
                name=f"quay.io/argoproj/argoexec:{version}",
                packages=("busybox-static",),
                lock="busybox",
                entrypoint=("argoexec",),
                recipe=argoexec_recipe(version),
                files=_argoexec_files(version),
            )
        )
    return result


#: Locks that no image names directly: build-time packages, unpacked aside (no closure: only their files are used).
BUILD_LOCKS = {"mpi-build": ("libopenmpi-dev",)}


# ---------------------------------------------------------------------------------------------- OCI archive

EPOCH = 0


def _layer(root: Path) -> bytes:
    """A deterministic tar of ``root``: sorted names, fixed times, numeric owners as unpacked."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        paths = sorted(p for p in root.rglob("*"))
        for path in paths:
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(root)))
            info.mtime = EPOCH
            info.uname = info.gname = ""
            info.pax_headers = {}
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    return buf.getvalue()


def _blob(directory: Path, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    (directory / "blobs/sha256").mkdir(parents=True, exist_ok=True)
    (directory / "blobs/sha256" / digest).write_bytes(data)
    return f"sha256:{digest}", len(data)


def write_archive(image: Image, root: Path, target: Path, stamp: str) -> None:
    layer = _layer(root)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        d = Path(tmp)
        compressed = gzip.compress(layer, compresslevel=1, mtime=EPOCH)
        layer_digest, layer_size = _blob(d, compressed)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {
                k: v
                for k, v in {
                    "Env": list(image.env),
                    "Entrypoint": list(image.entrypoint) or None,
                    "Cmd": list(image.cmd) or None,
                    "WorkingDir": image.workdir or None,
                    "Labels": {**image.labels, "dev.hera-volcano.inputs": stamp},
                }.items()
                if v
            },
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
            "history": [{"created_by": f"cluster/images/build.py ({image.name})"}],
        }
        config_digest, config_size = _blob(d, json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer_size}
            ],
        }
        manifest_digest, manifest_size = _blob(d, json.dumps(manifest, sort_keys=True).encode())
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": manifest_digest,
                    "size": manifest_size,
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {
                        "io.containerd.image.name": normalized(image.name),
                        "org.opencontainers.image.ref.name": image.name.rsplit(":", 1)[-1],
                    },
                }
            ],
        }
        (d / "index.json").write_text(json.dumps(index, sort_keys=True))
        (d / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
        partial = target.with_suffix(".partial")
        with tarfile.open(partial, "w") as tar:
            for path in sorted(d.rglob("*")):
                info = tar.gettarinfo(str(path), arcname=str(path.relative_to(d)))
                info.mtime = EPOCH
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
        partial.rename(target)


def normalized(name: str) -> str:
    """The reference as the kubelet asks containerd for it: Docker Hub names are spelled out in full
    (``busybox:1`` is ``docker.io/library/busybox:1``), or the imported image is not found."""
    first = name.split("/")[0]
    if "/" in name and ("." in first or ":" in first or first == "localhost"):
        return name
    return f"docker.io/{name}" if "/" in name else f"docker.io/library/{name}"


def archive_name(image: Image) -> str:
    return image.name.replace("/", "_").replace(":", "_") + ".tar"


def stamp_of(image: Image, inputs: Inputs) -> str:
    h = hashlib.sha256()
    h.update(Path(__file__).read_bytes())
    h.update(image.name.encode())
    if image.lock:
        h.update((HERE / f"{image.lock}.lock").read_bytes())
    for path in image.files(inputs):
        if not path.is_file():
            raise BuildError(f"{path} is missing: build it first (cluster/build.sh)")
        h.update(str(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def build(image: Image, inputs: Inputs, out: Path) -> bool:
    """Build ``image`` into ``out`` unless an archive of the same inputs is there. Returns whether it built."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / archive_name(image)
    stamp_file = target.with_suffix(".stamp")
    stamp = stamp_of(image, inputs)
    if target.is_file() and stamp_file.is_file() and stamp_file.read_text() == stamp:
        return False
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        root = Path(tmp) / "rootfs"
        root.mkdir()
        if image.lock:
            unpack(fetch_debs(image.lock, inputs.debs), root)
        if image.recipe:
            image.recipe(root, inputs)
        write_archive(image, root, target, stamp)
    stamp_file.write_text(stamp)
    return True


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--debs", type=Path)
    p.add_argument("--bin", type=Path)
    p.add_argument("--argo", type=Path)
    p.add_argument("--kube-source", type=Path)
    p.add_argument("--lock", nargs="+", metavar="LOCK")
    args = p.parse_args(argv)
    try:
        if args.lock:
            roots = {i.lock: i.packages for i in images(()) if i.lock}
            for lock in args.lock:
                if lock in BUILD_LOCKS:
                    write_lock(lock, BUILD_LOCKS[lock], closure=False)
                else:
                    write_lock(lock, roots[lock])
            return 0
        if not all((args.out, args.debs, args.bin, args.argo, args.kube_source)):
            p.error("--out, --debs, --bin, --argo and --kube-source are needed to build")
        inputs = Inputs(debs=args.debs, bin=args.bin, argo=args.argo, kube_source=args.kube_source)
        versions = sorted(p.name for p in args.argo.iterdir() if p.is_dir()) if args.argo.is_dir() else []
        for image in images(versions):
            if build(image, inputs, args.out):
                print(f"cluster/images: built {image.name}", file=sys.stderr)
    except BuildError as e:
        print(f"cluster/images: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
