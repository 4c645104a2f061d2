"""How :mod:`benchwright.safefs` reaches, walks, removes and hands over folders an agent
wrote: one folder open at a time, never through a symbolic link (see the package's docstring)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import InfraError, UnsafeFile

DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
PATH = getattr(os, "O_PATH", 0) | os.O_NOFOLLOW | os.O_CLOEXEC
_REFUSED = (errno.ELOOP, errno.ENOTDIR)
"""What opening a folder ``O_NOFOLLOW | O_DIRECTORY`` says of a link or a non-folder."""
TARGET_SHOWN = 200
"""A symbolic link's target is quoted up to this many characters."""
FOLDER_MODE = 0o755

_WORDS = {"symlink": "a symbolic link", "folder": "a folder", "file": "a file",
          "fifo": "a FIFO (named pipe)", "socket": "a socket", "device": "a device node",
          "other": "a special file"}


def kind_of(mode: int) -> str:
    """``symlink``, ``folder``, ``file``, ``fifo``, ``socket``, ``device`` or ``other``."""
    for test, name in ((stat.S_ISLNK, "symlink"), (stat.S_ISDIR, "folder"), (stat.S_ISREG, "file"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"),
                       (stat.S_ISBLK, "device")):
        if test(mode):
            return name
    return "other"


@dataclass(frozen=True)
class Obstacle:
    """Something the harness found where it had to put a file or a folder, and removed (a
    symbolic link itself, never what it points to)."""

    path: str
    """Relative to the tree."""
    kind: str
    """As :func:`kind_of` names it."""
    target: str | None = None
    """A symbolic link's target (at most :data:`TARGET_SHOWN` characters)."""

    @property
    def suspicious(self) -> bool:
        """Not a plain file or folder: a link, a FIFO, a socket, a device."""
        return self.kind not in ("file", "folder")

    @property
    def what(self) -> str:
        """``a symbolic link to '/etc'``, ``a FIFO (named pipe)``..."""
        return _WORDS[self.kind] + (f" to {self.target!r}" if self.target is not None else "")

    def describe(self) -> str:
        return f"{self.path} was {self.what}"


def obstacle(fd: int, name: str, rel: str, st: os.stat_result) -> Obstacle:
    kind = kind_of(st.st_mode)
    target = None
    if kind == "symlink":
        try:
            target = os.readlink(name, dir_fd=fd)[:TARGET_SHOWN]
        except OSError:
            target = "?"
    return Obstacle(rel, kind, target)


def join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


# -- folders ---------------------------------------------------------------------------------------

def give_back(fd: int, name: str | None = None) -> None:
    """Give a folder the agent made inaccessible back to its owner (mode 0700): ``fd`` itself,
    or its entry ``name``, reached through ``O_PATH`` without following a link."""
    if name is None:
        os.fchmod(fd, 0o700)
        return
    handle = os.open(name, PATH, dir_fd=fd)
    try:
        if not stat.S_ISDIR(os.fstat(handle).st_mode):
            raise UnsafeFile(name, "is not a folder")
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)


def open_child(fd: int, name: str, rel: str, *, grant: bool) -> int:
    """The folder ``name`` of the open folder ``fd``, never through a link.

    Raises:
        FileNotFoundError: there is nothing called ``name``.
        UnsafeFile: it is not a folder (a link, a file...), or it cannot be opened.
    """
    try:
        return os.open(name, DIR, dir_fd=fd)
    except FileNotFoundError:
        raise
    except PermissionError as e:
        if not grant:
            raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None
    except OSError as e:
        if e.errno in _REFUSED:
            found = obstacle(fd, name, rel, os.lstat(name, dir_fd=fd))
            raise UnsafeFile(rel, f"is {found.what}, not a folder") from None
        raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None
    try:
        give_back(fd, name)
        return os.open(name, DIR, dir_fd=fd)
    except OSError as e:
        raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None


def retrying(fd: int, action: Callable[[int, str], None], name: str) -> None:
    """``action(fd, name)`` (unlink, rmdir, mkdir in the open folder ``fd``); once more after
    giving the folder back to its owner when the agent made it unwritable."""
    try:
        action(fd, name)
    except PermissionError:
        give_back(fd)
        action(fd, name)


def _unlink(fd: int, name: str) -> None:
    os.unlink(name, dir_fd=fd)


def _rmdir(fd: int, name: str) -> None:
    os.rmdir(name, dir_fd=fd)


def make_folder_at(fd: int, name: str) -> None:
    os.mkdir(name, FOLDER_MODE, dir_fd=fd)


FolderVisit = Callable[[int, str], list[str]]
"""Called with each folder (open) and its path: does its work there, and returns the names of
the subfolders to visit."""


def walk_tree(top: int, visit: FolderVisit, after: Callable[[int, str], None] | None = None,
               *, grant: bool = False) -> None:
    """Visit the open folder ``top`` (path ``""``) and the folders below it, depth first, one
    folder open at a time; ``after(parent_fd, name)`` once a subfolder and all below it are
    done. A subfolder that cannot be opened as a folder is skipped (``grant``: one the agent
    made inaccessible is given back to its owner first).

    Raises:
        UnsafeFile: a folder moved while the walk climbed out of it.
    """
    cur = os.dup(top)
    try:
        st = os.fstat(cur)
        stack: list[tuple[str, list[str], int, int]] = [("", visit(cur, ""), st.st_dev, st.st_ino)]
        while stack:
            rel, pending, _, _ = stack[-1]
            if pending:
                name = pending.pop()
                try:
                    child = open_child(cur, name, join(rel, name), grant=grant)
                except (FileNotFoundError, UnsafeFile):
                    continue
                os.close(cur)
                cur = child
                st = os.fstat(cur)
                stack.append((join(rel, name), visit(cur, join(rel, name)), st.st_dev, st.st_ino))
                continue
            stack.pop()
            if not stack:
                break
            _, _, dev, ino = stack[-1]
            up = os.open("..", DIR, dir_fd=cur)
            there = os.fstat(up)
            if (there.st_dev, there.st_ino) != (dev, ino):
                os.close(up)
                raise UnsafeFile(rel, "moved while the harness walked the workspace")
            os.close(cur)
            cur = up
            if after is not None:
                after(cur, rel.rsplit("/", 1)[-1])
    finally:
        os.close(cur)


def _empty(fd: int, rel: str) -> list[str]:
    """Remove every entry of the open folder ``fd`` but its subfolders; their names."""
    with os.scandir(fd) as it:
        entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    folders = []
    for name, is_dir in entries:
        if is_dir:
            folders.append(name)
        else:
            retrying(fd, _unlink, name)
    return folders


def remove_at(fd: int, name: str, rel: str) -> None:
    """Remove the entry ``name`` of the open folder ``fd``, a folder with all it holds; never
    through a symbolic link."""
    if not stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode):
        retrying(fd, _unlink, name)
        return
    top = open_child(fd, name, rel, grant=True)
    try:
        walk_tree(top, _empty, lambda parent, child: retrying(parent, _rmdir, child), grant=True)
    finally:
        os.close(top)
    retrying(fd, _rmdir, name)


def remove_tree(path: Path) -> None:
    """Remove ``path`` (a folder of the harness, or anything at that place) and all it holds,
    following no symbolic link in it; nothing when it does not exist."""
    try:
        parent = os.open(path.parent, DIR & ~os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    try:
        remove_at(parent, path.name, path.name)
    except FileNotFoundError:
        pass
    except (OSError, UnsafeFile) as e:
        raise InfraError(f"could not remove {path}: {e}") from e
    finally:
        os.close(parent)


def grant_file(fd: int, name: str) -> int:
    """Make the regular file ``name`` of the open folder ``fd`` readable by its owner again
    (through ``O_PATH``: never a link's target); 1 when it was not."""
    try:
        handle = os.open(name, PATH, dir_fd=fd)
    except OSError:
        return 0
    try:
        st = os.fstat(handle)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & stat.S_IRUSR:
            return 0
        os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(st.st_mode) | stat.S_IRUSR)
        return 1
    except OSError:
        return 0
    finally:
        os.close(handle)


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` (a folder of the harness) and everything in it to ``uid``/``gid``;
    symbolic links themselves, never what they point to."""
    top = os.open(path, DIR)

    def visit(fd: int, rel: str) -> list[str]:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for name, _ in entries:
            os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
        return [name for name, is_dir in entries if is_dir]

    try:
        os.fchown(top, uid, gid)
        walk_tree(top, visit)
    finally:
        os.close(top)
