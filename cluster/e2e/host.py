"""The host around the test cluster: what it needs, what the cluster changes, and putting it back.

Start records the host as it was (sysctls, firewall tables, which fixed paths and cgroups existed, mounts, network
interfaces and namespaces, and the processes of the kind the cluster runs); teardown
stops every process the cluster started (by the PIDs it recorded, the containers by their cgroups, containerd's
shims by the socket they serve), unmounts what was mounted under its paths, deletes its network namespaces and
bridge, and restores the record. Nothing here is specific to one component.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from layout import BRIDGE, FIXED_PATHS, NODE_IP, SYSCTLS

CGROUP_ROOT = Path("/sys/fs/cgroup")
KUBEPODS = "kubepods"


class HostError(RuntimeError):
    """The host cannot run the cluster, or could not be restored; the message says what to do."""


def sh(*argv: str | Path, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False, input=input)
    if check and proc.returncode != 0:
        raise HostError(f"{' '.join(map(str, argv))} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


# ---------------------------------------------------------------------------------------------- preflight


def require_root_and_linux() -> None:
    if os.uname().sysname != "Linux":
        raise HostError("the end-to-end cluster needs Linux (it runs a kubelet, containerd and runc)")
    if os.geteuid() != 0:
        raise HostError("the end-to-end cluster needs root (network bridge, mounts, cgroups, iptables)")


def cannot_run(script: str) -> bool:
    """For the benchmarks, which skip rather than fail on a host without the cluster: True, having said why."""
    try:
        require_root_and_linux()
    except HostError as e:
        print(f"{script}: skipped: {e}")
        return True
    return False


def preflight(ports: Iterable[tuple[str, int]]) -> None:
    """Raise HostError with one line saying why this host cannot run the cluster."""
    require_root_and_linux()
    for tool in ("ip", "iptables", "nft", "containerd", "runc", "ctr", "mount", "umount"):
        if shutil.which(tool) is None:
            raise HostError(f"`{tool}` is not installed: run `cluster/build.sh host` (or `make test-e2e`)")
    if not Path("/usr/lib/cni/bridge").is_file():
        raise HostError("the CNI plugins are not installed: run `cluster/build.sh host`")
    if link_exists(BRIDGE):
        raise HostError(f"network interface {BRIDGE} already exists: is a cluster running? (`make cluster-down`)")
    for host, port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host if host != NODE_IP else "0.0.0.0", port))
            except OSError as e:
                raise HostError(f"port {port} is in use ({e}): stop what listens there, or `make cluster-down`") from e
    if Path("/run/containerd/containerd.sock").exists():
        raise HostError("a system containerd is running (/run/containerd/containerd.sock): stop it first")


# ---------------------------------------------------------------------------------------------- record / restore


def read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", name).read_text().strip()
    except OSError:
        return None


def write_sysctl(name: str, value: str) -> None:
    with contextlib.suppress(OSError):
        Path("/proc/sys", name).write_text(value + "\n")


def nft_tables() -> dict[str, str]:
    """Every nftables table ('FAMILY NAME') with its rules as `nft list table` prints them."""
    out = sh("nft", "list", "tables").stdout
    tables = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "table":
            key = f"{parts[1]} {parts[2]}"
            tables[key] = sh("nft", "list", "table", parts[1], parts[2]).stdout
    return tables


def cgroup_dirs() -> list[str]:
    """The kubepods cgroups (in every hierarchy) that exist now."""
    found = []
    for hierarchy in sorted(CGROUP_ROOT.iterdir()) if CGROUP_ROOT.is_dir() else []:
        for candidate in (hierarchy / KUBEPODS, hierarchy / f"{KUBEPODS}.slice"):
            if candidate.is_dir():
                found.append(str(candidate))
    return found


def snapshot(home: Path) -> dict[str, Any]:
    """The host as the cluster of ``home`` (its state, configuration and certificates) may change it."""
    return {
        "sysctls": {name: read_sysctl(name) for name in SYSCTLS},
        "nft": nft_tables(),
        "paths": {p: os.path.lexists(p) for p in FIXED_PATHS},
        "cgroups": cgroup_dirs(),
        "netns": sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else [],
        "links": sorted(os.listdir("/sys/class/net")),
        "mounts": sorted(set(mounts())),
        "processes": cluster_processes(home),
    }


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two snapshots, one line per difference (empty when the host is as it was)."""
    diffs = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    diffs.append(f"{key} {k}: {a.get(k)!r} before, {b.get(k)!r} now")
        elif isinstance(a, list) and isinstance(b, list):
            diffs += [f"{key}: {item!r} is there now" for item in sorted(set(b) - set(a))]
            diffs += [f"{key}: {item!r} is gone" for item in sorted(set(a) - set(b))]
        elif a != b:
            diffs.append(f"{key}: {a!r} before, {b!r} now")
    return diffs


def save_snapshot(path: Path, home: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(snapshot(home), indent=1, sort_keys=True))
    tmp.rename(path)


def restore(before: dict[str, Any], state_dirs: Sequence[Path]) -> list[str]:
    """Put the host back as ``before`` recorded it. Returns what could not be restored (empty when all was)."""
    problems: list[str] = []
    unmount_under([*state_dirs, Path("/run/containerd"), Path("/run/netns")], problems)
    remove_netns(set(before.get("netns", [])), problems)
    remove_links(set(before.get("links", [])), problems)
    restore_nft(before.get("nft", {}), problems)
    for name, value in before.get("sysctls", {}).items():
        if value is not None and read_sysctl(name) != value:
            write_sysctl(name, value)
    remove_cgroups(set(before.get("cgroups", [])), problems)
    for path, existed in before.get("paths", {}).items():
        if not existed and os.path.lexists(path):
            try:
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
            except OSError as e:
                problems.append(f"cannot remove {path}: {e}")
    return problems


# ---------------------------------------------------------------------------------------------- network


def link_exists(name: str) -> bool:
    return os.path.exists(f"/sys/class/net/{name}")


def create_bridge() -> None:
    """The pods' gateway, made before the CNI bridge plugin adopts it, so the API server can bind its address."""
    sh("ip", "link", "add", BRIDGE, "type", "bridge")
    sh("ip", "addr", "add", f"{NODE_IP}/24", "dev", BRIDGE)
    sh("ip", "link", "set", BRIDGE, "up")


def remove_links(before: set[str], problems: list[str]) -> None:
    """Delete network interfaces that appeared (our bridge, veths left by killed pods)."""
    for name in sorted(os.listdir("/sys/class/net")):
        if name in before:
            continue
        proc = sh("ip", "link", "delete", name, check=False)
        if proc.returncode != 0 and link_exists(name):
            problems.append(f"cannot delete network interface {name}: {proc.stderr.strip()}")


def remove_netns(before: set[str], problems: list[str]) -> None:
    if not os.path.isdir("/run/netns"):
        return
    for name in sorted(os.listdir("/run/netns")):
        if name in before:
            continue
        path = f"/run/netns/{name}"
        with contextlib.suppress(OSError):
            os.unlink(path)
        if os.path.lexists(path):
            problems.append(f"cannot remove network namespace {path}")


def restore_nft(before: dict[str, str], problems: list[str]) -> None:
    """Delete the tables that appeared; put back the rules of tables that were there and changed."""
    now = nft_tables()
    for table, rules in now.items():
        if before.get(table) == rules:
            continue
        family, name = table.split()
        sh("nft", "delete", "table", family, name, check=False)
        if table in before:
            proc = sh("nft", "-f", "-", input=before[table], check=False)
            if proc.returncode != 0:
                problems.append(f"cannot restore nftables table {table}: {proc.stderr.strip()}")
    for table in set(nft_tables()) - set(before):
        problems.append(f"nftables table {table} is still there")


# ---------------------------------------------------------------------------------------------- mounts, cgroups


def mounts() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")
            points.append(point)
    return points


def unmount_under(roots: Sequence[Path], problems: list[str]) -> None:
    prefixes = [str(r.resolve()) if r.exists() else str(r) for r in roots]
    for _ in range(3):
        todo = [m for m in mounts() if any(m == p or m.startswith(p + "/") for p in prefixes)]
        if not todo:
            return
        for point in sorted(todo, key=lambda m: m.count("/"), reverse=True):
            if sh("umount", point, check=False).returncode != 0:
                sh("umount", "-l", point, check=False)
    left = [m for m in mounts() if any(m == p or m.startswith(p + "/") for p in prefixes)]
    problems.extend(f"still mounted: {m}" for m in left)


def cgroup_processes(dirs: Iterable[str]) -> set[int]:
    pids: set[int] = set()
    for top in dirs:
        for procs in Path(top).rglob("cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(x) for x in procs.read_text().split())
    return pids


def remove_cgroups(before: set[str], problems: list[str]) -> None:
    for top in cgroup_dirs():
        if top in before:
            continue
        for d in sorted((p for p in Path(top).rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                d.rmdir()
        try:
            Path(top).rmdir()
        except OSError as e:
            problems.append(f"cannot remove cgroup {top}: {e}")


# ---------------------------------------------------------------------------------------------- processes


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is not alive.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def stop_pids(pids: Iterable[int], timeout: float = 15, sig: int = signal.SIGTERM) -> None:
    """Signal each process, wait for it, and SIGKILL what is left after ``timeout``."""
    pids = [p for p in pids if alive(p)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        for pid in pids:  # reap our own children
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def cluster_processes(home: Path) -> list[str]:
    """The programs running now that belong to the cluster of ``home`` (no PIDs, so two snapshots compare): every
    daemon it starts names a path under ``home`` in its arguments (its state, configuration, certificates or
    containerd's socket), and a pod's processes run in its cgroups. Others (a control plane of the unit tests run
    from the same binaries, say) are not the cluster's."""
    found = []
    marker = str(home.resolve()).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            in_pod = KUBEPODS in Path(f"/proc/{entry}/cgroup").read_text()
            if marker in argv or in_pod:
                found.append(os.readlink(f"/proc/{entry}/exe"))
    return sorted(found)


def processes_with_argument(value: str) -> list[int]:
    """PIDs whose command line has ``value`` as one argument (containerd's shims name the socket they serve)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if value.encode() in argv:
                found.append(int(entry))
    return found
