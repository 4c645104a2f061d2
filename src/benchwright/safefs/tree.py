"""The :class:`Tree`: reads, writes and moves inside a folder an agent wrote (see the
package's docstring)."""

from __future__ import annotations

import functools
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from benchwright.errors import InfraError, UnsafeFile
from benchwright.safefs.walk import (
    DIR,
    FOLDER_MODE,
    Obstacle,
    grant_file,
    join,
    make_folder_at,
    obstacle,
    open_child,
    remove_at,
    retrying,
    walk_tree,
)

_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Slice:
    """The start of a file, and its whole size."""

    data: bytes
    size: int
    mode: int = 0o644
    """Its permission bits."""

    @property
    def cut(self) -> bool:
        """The file is larger than what was read."""
        return self.size > len(self.data)


def parts(rel: str) -> list[str]:
    """The components of ``rel``, a path relative to a tree.

    Raises:
        UnsafeFile: an absolute path, a ``..``, a NUL, or no component at all.
    """
    if "\0" in rel:
        raise UnsafeFile(rel, "contains a NUL character")
    if rel.startswith("/"):
        raise UnsafeFile(rel, "is an absolute path (paths are relative to the workspace)")
    names = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in names:
        raise UnsafeFile(rel, "goes up with '..', which is not allowed")
    if not names:
        raise UnsafeFile(rel, "names the workspace itself")
    return names


def _read_at_most(fd: int, cap: int) -> bytes:
    chunks: list[bytes] = []
    left = cap
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the tree ----------------------------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


def _harness_side(method: Callable[Concatenate[Tree, P], R]) -> Callable[Concatenate[Tree, P], R]:
    """A system call that failed for another reason than what the agent left (no space, an
    I/O error...) is the harness's failure: :class:`~benchwright.errors.InfraError`."""

    @functools.wraps(method)
    def wrapper(self: Tree, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except OSError as e:
            raise InfraError(f"{method.__name__} in the workspace {self.root} failed: {e}") from e

    return wrapper


class Tree:
    """A folder of the harness whose contents an agent wrote (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _open(self) -> int:
        """The root (a path of the harness, not the agent's to replace), opened; made
        accessible to its owner again when the agent took its permissions away."""
        try:
            try:
                return os.open(self.root, DIR)
            except PermissionError:
                os.chmod(self.root, FOLDER_MODE)
                return os.open(self.root, DIR)
        except OSError as e:
            raise InfraError(f"cannot open the workspace {self.root}: {e.strerror}") from e

    def _folder(self, names: list[str], *, make: bool = False,
                found: list[Obstacle] | None = None) -> int:
        """The folder at ``names`` (opened from the root without following a link). ``make``:
        missing folders are made. ``found`` given: whatever is in the way (a link, a file...)
        is removed, recorded there, and replaced by a new folder; else it raises.

        Raises:
            FileNotFoundError: a folder is missing (and not ``make``).
            UnsafeFile: something on the way is not a folder (and no ``found``).
        """
        fd = self._open()
        rel = ""
        try:
            for name in names:
                rel = join(rel, name)
                try:
                    child = open_child(fd, name, rel, grant=found is not None)
                except FileNotFoundError:
                    if not make:
                        raise
                    retrying(fd, make_folder_at, name)
                    child = open_child(fd, name, rel, grant=False)
                except UnsafeFile:
                    if found is None:
                        raise
                    found.append(obstacle(fd, name, rel, os.lstat(name, dir_fd=fd)))
                    remove_at(fd, name, rel)
                    retrying(fd, make_folder_at, name)
                    child = open_child(fd, name, rel, grant=False)
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    @_harness_side
    def read(self, rel: str, cap: int, *, one_name: bool = True) -> Slice | None:
        """At most ``cap`` bytes of the regular file ``rel``; None when there is nothing there.

        Raises:
            UnsafeFile: a folder on the way is a link (or not a folder), or the file is not a
                regular file (a link, a FIFO, a folder...) or, when ``one_name``, is a hard
                link.
        """
        names = parts(rel)
        try:
            folder = self._folder(names[:-1])
        except FileNotFoundError:
            return None
        name = names[-1]
        try:
            try:
                before = os.lstat(name, dir_fd=folder)
            except FileNotFoundError:
                return None
            if not stat.S_ISREG(before.st_mode):
                found = obstacle(folder, name, rel, before)
                raise UnsafeFile(rel, f"is {found.what}, not a regular file")
            try:
                fd = os.open(name, _FILE, dir_fd=folder)
            except OSError as e:
                raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None
            try:
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(st.st_mode):
                    raise UnsafeFile(rel, "was replaced while the harness opened it")
                if one_name and st.st_nlink > 1:
                    raise UnsafeFile(rel, f"is a hard link ({st.st_nlink} names for one file)")
                data = _read_at_most(fd, cap)
                return Slice(data, max(st.st_size, len(data)), stat.S_IMODE(st.st_mode))
            finally:
                os.close(fd)
        finally:
            os.close(folder)

    @_harness_side
    def make_folder(self, rel: str) -> list[Obstacle]:
        """Make sure ``rel`` is a real folder (made, with the folders above it, when missing);
        what was in the way was removed."""
        found: list[Obstacle] = []
        os.close(self._folder(parts(rel), make=True, found=found))
        return found

    @_harness_side
    def write(self, rel: str, data: bytes, *, mode: int = 0o644, clear: bool = True) -> list[Obstacle]:
        """Put a new regular file ``rel`` holding ``data`` in place, atomically (a link, a FIFO
        or a plain file at the name is replaced, never written through). ``clear``: what else
        was in the way (a folder at the name, a link or a file where a folder goes) was removed
        and is returned (a plain file that is replaced is not reported).

        Raises:
            UnsafeFile: not ``clear``, and a folder is at the name or something that is not a
                folder is on the way.
        """
        names = parts(rel)
        found: list[Obstacle] = []
        folder = self._folder(names[:-1], make=True, found=found if clear else None)
        name = names[-1]
        try:
            self._clear(folder, name, rel, found, folders=clear)
            tmp = f".bw-new-{secrets.token_hex(8)}"
            fd = os.open(tmp, _NEW, mode, dir_fd=folder)
            try:
                with os.fdopen(fd, "wb", closefd=False) as out:
                    out.write(data)
                os.fchmod(fd, mode)
            except BaseException:
                os.unlink(tmp, dir_fd=folder)
                raise
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            os.close(folder)
        return found

    @staticmethod
    def _clear(folder: int, name: str, rel: str, found: list[Obstacle], *, folders: bool = True,
               everything: bool = False) -> None:
        """Record what is at ``name`` (not a plain file) and remove it when a rename could not
        replace it (a folder) or ``everything``."""
        try:
            st = os.lstat(name, dir_fd=folder)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode) and not folders:
            raise UnsafeFile(rel, "is a folder")
        if not stat.S_ISREG(st.st_mode):
            found.append(obstacle(folder, name, rel, st))
        if stat.S_ISDIR(st.st_mode) or everything:
            remove_at(folder, name, rel)

    @_harness_side
    def remove(self, rel: str) -> Obstacle | None:
        """Remove whatever is at ``rel`` (a folder with all it holds; a link itself); what it
        was, or None when there was nothing.

        Raises:
            UnsafeFile: a folder on the way is a link (or not a folder).
        """
        names = parts(rel)
        try:
            folder = self._folder(names[:-1])
        except FileNotFoundError:
            return None
        try:
            st = os.lstat(names[-1], dir_fd=folder)
            gone = obstacle(folder, names[-1], rel, st)
            remove_at(folder, names[-1], rel)
            return gone
        except FileNotFoundError:
            return None
        finally:
            os.close(folder)

    @_harness_side
    def move_in(self, source: Path, rel: str) -> list[Obstacle]:
        """Move ``source`` (a file or folder of the harness, outside the tree) to ``rel``, over
        whatever is there; what was in the way was removed."""
        names = parts(rel)
        found: list[Obstacle] = []
        origin = os.open(source.parent, DIR)
        try:
            folder = self._folder(names[:-1], make=True, found=found)
            try:
                self._clear(folder, names[-1], rel, found, everything=True)
                os.rename(source.name, names[-1], src_dir_fd=origin, dst_dir_fd=folder)
            finally:
                os.close(folder)
        finally:
            os.close(origin)
        return found

    @_harness_side
    def move_out(self, rel: str, target: Path) -> bool:
        """Move the entry at ``rel`` (whatever it is, not followed) to ``target``, a path of the
        harness outside the tree (its folders are made); False when there is nothing there.

        Raises:
            UnsafeFile: a folder on the way is a link (or not a folder).
        """
        names = parts(rel)
        try:
            folder = self._folder(names[:-1])
        except FileNotFoundError:
            return False
        try:
            try:
                os.lstat(names[-1], dir_fd=folder)
            except FileNotFoundError:
                return False
            target.parent.mkdir(parents=True, exist_ok=True)
            there = os.open(target.parent, DIR)
            try:
                os.rename(names[-1], target.name, src_dir_fd=folder, dst_dir_fd=there)
            finally:
                os.close(there)
            return True
        finally:
            os.close(folder)

    @_harness_side
    def tidy(self, nested: str, *, grant: bool, path_limit: int) -> Tidied:
        """Walk the whole tree once, before a tool that follows no rule of ours (git) reads it:
        remove every entry called ``nested`` below the root (not the root's own); when
        ``grant``, give back to their owner the files and folders the agent made unreadable (a
        harness that is not root: the agent ran as its uid); note paths longer than
        ``path_limit`` bytes."""
        out = Tidied()

        def visit(fd: int, rel: str) -> list[str]:
            with os.scandir(fd) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            folders = []
            for name, is_dir in entries:
                path = join(rel, name)
                if len(path.encode(errors="surrogateescape")) > path_limit:
                    out.too_long.append(path)
                if name == nested and rel:
                    out.removed.append(obstacle(fd, name, path, os.lstat(name, dir_fd=fd)))
                    remove_at(fd, name, path)
                elif is_dir:
                    if not (name == nested and not rel):
                        folders.append(name)
                elif grant:
                    out.granted += grant_file(fd, name)
            return folders

        root = self._open()
        try:
            walk_tree(root, visit, grant=grant)
        finally:
            os.close(root)
        return out


@dataclass
class Tidied:
    """What :meth:`Tree.tidy` did and saw."""

    removed: list[Obstacle] = field(default_factory=list)
    granted: int = 0
    too_long: list[str] = field(default_factory=list)


