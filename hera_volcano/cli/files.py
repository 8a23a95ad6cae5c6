"""All-or-nothing file output for the CLI: several files are written (or removed) together, or none is touched."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path


class WriteError(Exception):
    """A file could not be written or removed; the message is one line naming the file (not a temporary one)."""


def write_atomic(path: Path, text: str) -> None:
    """Write one file as ``write_files`` does: readers never see half of it."""
    write_files({path: text})


def write_files(changes: Mapping[Path, str | None]) -> None:
    """Write every file (``None``: remove it), or change none: a failure halfway must not leave a mix of old and new.

    Each text goes to a temporary file beside its target and each removal is first a rename aside; only when all
    are staged are they renamed into place, so a read-only folder or a full disk changes nothing. A file being
    replaced keeps a hard-linked backup until all are in place, so a failing rename is undone too. A symlink is
    followed (its target is replaced), a device or FIFO is written in place, and a file keeps its mode (a new one
    gets the umask's). A failure is a ``WriteError`` naming the file."""
    writes: list[tuple[Path, Path]] = []  # (temporary file, its destination)
    removals: list[tuple[Path, Path]] = []  # (where a removed file waits, where it was)
    made: list[Path] = []  # folders created for new files
    placed: list[tuple[Path, Path | None]] = []  # (destination written, backup of the file it replaced)
    try:
        for path, text in changes.items():
            with _naming("write" if text is not None else "remove", path):
                if text is None:
                    removals.append((_move_aside(path), path))
                else:
                    staged = _stage(path, text, made)
                    if staged is not None:
                        writes.append(staged)
        for tmp, target in writes:
            with _naming("write", target):
                backup = _backup(target)
                try:
                    os.replace(tmp, target)
                except BaseException:
                    if backup is not None:
                        backup.unlink()
                    raise
                placed.append((target, backup))
    except BaseException:
        _undo(writes, removals, made, placed)
        raise
    # Everything is in place: the backups and the removed files can go (a leftover is only a hidden file).
    for leftover in [b for _, b in placed if b is not None] + [tmp for tmp, _ in removals]:
        with contextlib.suppress(OSError):
            leftover.unlink()


def _backup(target: Path) -> Path | None:
    """A hard link to the file ``target`` is about to replace (None if there is none), to restore it on failure."""
    if not target.is_file():
        return None
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
    os.close(fd)
    backup = Path(name)
    try:
        backup.unlink()
        os.link(target, backup)
    except OSError:  # a file system without hard links: a copy does
        shutil.copy2(target, backup)
    return backup


@contextlib.contextmanager
def _naming(verb: str, path: Path) -> Iterator[None]:
    """Turn an ``OSError`` into one line that names the file, not a temporary one."""
    try:
        yield
    except OSError as e:
        raise WriteError(f"cannot {verb} {path}: {e.strerror or e}") from None


def _stage(path: Path, text: str, made: list[Path]) -> tuple[Path, Path] | None:
    """Write ``text`` to a temporary file beside ``path``'s target; a device or FIFO is written in place (None)."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode: int | None = target.stat().st_mode  # a symlink loop fails here, as "Too many levels of symbolic links"
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        return None
    _make_folders(target.parent, made)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask() if mode is None else stat.S_IMODE(mode))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp), target


def _move_aside(path: Path) -> Path:
    """Rename ``path`` to a hidden name beside it, so that its removal can still be undone."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".removed", dir=path.parent)
    os.close(fd)
    try:
        os.replace(path, tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Create ``folder`` and its missing parents, noting each in ``made``; a file in the way is "Not a directory"
    (``mkdir`` would say "File exists")."""
    missing: list[Path] = []
    while not folder.is_dir():
        if folder.exists() or folder.is_symlink():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        new.mkdir()
        made.append(new)


def _undo(
    writes: Sequence[tuple[Path, Path]],
    removals: Sequence[tuple[Path, Path]],
    made: Sequence[Path],
    placed: Sequence[tuple[Path, Path | None]],
) -> None:
    """Put back what a failed ``write_files`` staged or placed, as far as the file system lets it."""
    for target, backup in reversed(placed):
        with contextlib.suppress(OSError):
            if backup is None:
                target.unlink()
            else:
                os.replace(backup, target)
    for tmp, _ in writes:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    for tmp, was in reversed(removals):
        with contextlib.suppress(OSError):
            os.replace(tmp, was)
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
