"""Reading and writing inside a folder an agent wrote, without following anything it made.

A :class:`Tree` is a folder the harness made (an agent's workspace, its ledger folder) whose
contents an agent controls. Every path is relative to it, and is walked one component at a
time from the folder's file descriptor: each folder on the way is opened ``O_NOFOLLOW |
O_DIRECTORY`` relative to the one before (``openat``), so a symbolic link at any component, the
last one included, is refused or removed rather than followed, and nothing renamed during the
walk can lead it out of the tree (each step starts from a folder already open). Absolute
paths, ``..`` and NUL characters are refused before anything is opened.

* **Reads** (:meth:`Tree.read`): the entry must be a regular file with one name (``lstat``
  first, so a FIFO or a device is never even opened; not a hard link either), opened
  ``O_NOFOLLOW | O_NONBLOCK`` and checked again with ``fstat`` to be the same file; at most
  ``cap`` bytes are read, and the file's size is reported so that a caller can say it was
  larger. Anything else raises :class:`~benchwright.errors.UnsafeFile` with the reason.
* **Writes** (:meth:`Tree.write`): the missing folders on the way are made (``mkdirat``), a
  new file is created ``O_CREAT | O_EXCL | O_NOFOLLOW`` next to the name and renamed over it
  (``renameat``: a symbolic link, a hard link or a FIFO left at the name is replaced, never
  written through; a folder there is removed first).
* **Moves** (:meth:`Tree.move_in`, :meth:`Tree.move_out`): ``renameat`` between a folder of the
  harness and a folder of the tree reached as above.
* **Removal** (:meth:`Tree.remove`, :func:`remove_tree`) is iterative and holds one folder open
  at a time, climbing back through ``..`` checked against the folder it came from: a tree
  thousands of folders deep exhausts neither the stack nor the file descriptors (Python 3.11's
  ``shutil.rmtree`` and ``os.walk`` recurse and raise ``RecursionError`` on it). A folder the
  agent made unreadable or unwritable (mode 000, when the harness is not root and the agent
  ran as its uid) is given back its owner's permissions through an ``O_PATH`` descriptor before
  it is emptied.

What a write, a move or a folder to be made found in its way is returned as :class:`Obstacle`
values, and the harness decides: a symbolic link, a FIFO, a socket or a device is a violation
(:attr:`Obstacle.suspicious`), a plain file or folder is the agent's own work.

Linux's ``openat2(RESOLVE_NO_SYMLINKS)`` would do a read's walk in one system call; the
component walk is used on every kernel instead, since writes must make their folders on the way
anyway: one code path, at a few system calls per component.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.errors import InfraError, UnsafeFile

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH = getattr(os, "O_PATH", 0) | os.O_NOFOLLOW | os.O_CLOEXEC
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


def _obstacle(fd: int, name: str, rel: str, st: os.stat_result) -> Obstacle:
    kind = kind_of(st.st_mode)
    target = None
    if kind == "symlink":
        try:
            target = os.readlink(name, dir_fd=fd)[:TARGET_SHOWN]
        except OSError:
            target = "?"
    return Obstacle(rel, kind, target)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


# -- folders ---------------------------------------------------------------------------------------

def _grant(fd: int, name: str | None = None) -> None:
    """Give a folder the agent made inaccessible back to its owner (mode 0700): ``fd`` itself,
    or its entry ``name``, reached through ``O_PATH`` without following a link."""
    if name is None:
        os.fchmod(fd, 0o700)
        return
    handle = os.open(name, _PATH, dir_fd=fd)
    try:
        if not stat.S_ISDIR(os.fstat(handle).st_mode):
            raise UnsafeFile(name, "is not a folder")
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)


def _open_child(fd: int, name: str, rel: str, *, grant: bool) -> int:
    """The folder ``name`` of the open folder ``fd``, never through a link.

    Raises:
        FileNotFoundError: there is nothing called ``name``.
        UnsafeFile: it is not a folder (a link, a file...), or it cannot be opened.
    """
    try:
        return os.open(name, _DIR, dir_fd=fd)
    except FileNotFoundError:
        raise
    except PermissionError as e:
        if not grant:
            raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None
    except OSError as e:
        if e.errno in _REFUSED:
            found = _obstacle(fd, name, rel, os.lstat(name, dir_fd=fd))
            raise UnsafeFile(rel, f"is {found.what}, not a folder") from None
        raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None
    try:
        _grant(fd, name)
        return os.open(name, _DIR, dir_fd=fd)
    except OSError as e:
        raise UnsafeFile(rel, f"cannot be opened: {e.strerror}") from None


def _retrying(fd: int, action: Callable[[int, str], None], name: str) -> None:
    """``action(fd, name)`` (unlink, rmdir, mkdir in the open folder ``fd``); once more after
    giving the folder back to its owner when the agent made it unwritable."""
    try:
        action(fd, name)
    except PermissionError:
        _grant(fd)
        action(fd, name)


def _unlink(fd: int, name: str) -> None:
    os.unlink(name, dir_fd=fd)


def _rmdir(fd: int, name: str) -> None:
    os.rmdir(name, dir_fd=fd)


def _mkdir(fd: int, name: str) -> None:
    os.mkdir(name, FOLDER_MODE, dir_fd=fd)


FolderVisit = Callable[[int, str], list[str]]
"""Called with each folder (open) and its path: does its work there, and returns the names of
the subfolders to visit."""


def _walk_tree(top: int, visit: FolderVisit, after: Callable[[int, str], None] | None = None,
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
                    child = _open_child(cur, name, _join(rel, name), grant=grant)
                except (FileNotFoundError, UnsafeFile):
                    continue
                os.close(cur)
                cur = child
                st = os.fstat(cur)
                stack.append((_join(rel, name), visit(cur, _join(rel, name)), st.st_dev, st.st_ino))
                continue
            stack.pop()
            if not stack:
                break
            _, _, dev, ino = stack[-1]
            up = os.open("..", _DIR, dir_fd=cur)
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
            _retrying(fd, _unlink, name)
    return folders


def _remove_at(fd: int, name: str, rel: str) -> None:
    """Remove the entry ``name`` of the open folder ``fd``, a folder with all it holds; never
    through a symbolic link."""
    if not stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode):
        _retrying(fd, _unlink, name)
        return
    top = _open_child(fd, name, rel, grant=True)
    try:
        _walk_tree(top, _empty, lambda parent, child: _retrying(parent, _rmdir, child), grant=True)
    finally:
        os.close(top)
    _retrying(fd, _rmdir, name)


def remove_tree(path: Path) -> None:
    """Remove ``path`` (a folder of the harness, or anything at that place) and all it holds,
    following no symbolic link in it; nothing when it does not exist."""
    try:
        parent = os.open(path.parent, _DIR & ~os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    try:
        _remove_at(parent, path.name, path.name)
    except FileNotFoundError:
        pass
    except (OSError, UnsafeFile) as e:
        raise InfraError(f"could not remove {path}: {e}") from e
    finally:
        os.close(parent)


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

class Tree:
    """A folder of the harness whose contents an agent wrote (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _open(self) -> int:
        """The root (a path of the harness, not the agent's to replace), opened; made
        accessible to its owner again when the agent took its permissions away."""
        try:
            try:
                return os.open(self.root, _DIR)
            except PermissionError:
                os.chmod(self.root, FOLDER_MODE)
                return os.open(self.root, _DIR)
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
                rel = _join(rel, name)
                try:
                    child = _open_child(fd, name, rel, grant=found is not None)
                except FileNotFoundError:
                    if not make:
                        raise
                    _retrying(fd, _mkdir, name)
                    child = _open_child(fd, name, rel, grant=False)
                except UnsafeFile:
                    if found is None:
                        raise
                    found.append(_obstacle(fd, name, rel, os.lstat(name, dir_fd=fd)))
                    _remove_at(fd, name, rel)
                    _retrying(fd, _mkdir, name)
                    child = _open_child(fd, name, rel, grant=False)
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

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
                found = _obstacle(folder, name, rel, before)
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

    def make_folder(self, rel: str) -> list[Obstacle]:
        """Make sure ``rel`` is a real folder (made, with the folders above it, when missing);
        what was in the way was removed."""
        found: list[Obstacle] = []
        os.close(self._folder(parts(rel), make=True, found=found))
        return found

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
            found.append(_obstacle(folder, name, rel, st))
        if stat.S_ISDIR(st.st_mode) or everything:
            _remove_at(folder, name, rel)

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
            gone = _obstacle(folder, names[-1], rel, st)
            _remove_at(folder, names[-1], rel)
            return gone
        except FileNotFoundError:
            return None
        finally:
            os.close(folder)

    def move_in(self, source: Path, rel: str) -> list[Obstacle]:
        """Move ``source`` (a file or folder of the harness, outside the tree) to ``rel``, over
        whatever is there; what was in the way was removed."""
        names = parts(rel)
        found: list[Obstacle] = []
        origin = os.open(source.parent, _DIR)
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

    def move_out(self, rel: str, target: Path) -> None:
        """Move the entry at ``rel`` (whatever it is, not followed) to ``target``, a path of the
        harness outside the tree (its folders are made).

        Raises:
            FileNotFoundError: there is nothing at ``rel``.
            UnsafeFile: a folder on the way is a link (or not a folder).
        """
        names = parts(rel)
        folder = self._folder(names[:-1])
        try:
            os.lstat(names[-1], dir_fd=folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            there = os.open(target.parent, _DIR)
            try:
                os.rename(names[-1], target.name, src_dir_fd=folder, dst_dir_fd=there)
            finally:
                os.close(there)
        finally:
            os.close(folder)

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
                path = _join(rel, name)
                if len(path.encode(errors="surrogateescape")) > path_limit:
                    out.too_long.append(path)
                if name == nested and rel:
                    out.removed.append(_obstacle(fd, name, path, os.lstat(name, dir_fd=fd)))
                    _remove_at(fd, name, path)
                elif is_dir:
                    if not (name == nested and not rel):
                        folders.append(name)
                elif grant:
                    out.granted += _grant_file(fd, name)
            return folders

        root = self._open()
        try:
            _walk_tree(root, visit, grant=grant)
        finally:
            os.close(root)
        return out


@dataclass
class Tidied:
    """What :meth:`Tree.tidy` did and saw."""

    removed: list[Obstacle] = field(default_factory=list)
    granted: int = 0
    too_long: list[str] = field(default_factory=list)


def _grant_file(fd: int, name: str) -> int:
    """Make the regular file ``name`` of the open folder ``fd`` readable by its owner again
    (through ``O_PATH``: never a link's target); 1 when it was not."""
    try:
        handle = os.open(name, _PATH, dir_fd=fd)
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
    top = os.open(path, _DIR)

    def visit(fd: int, rel: str) -> list[str]:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for name, _ in entries:
            os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
        return [name for name, is_dir in entries if is_dir]

    try:
        os.fchown(top, uid, gid)
        _walk_tree(top, visit)
    finally:
        os.close(top)
