"""An agent run's private home: a writable folder of its own, outside the graded workspace.

A coding-agent CLI keeps state in its home (``~/.config/...``, ``~/.qwen``, ``~/.codex``,
sessions, logs, caches). Were HOME the workspace, all of it would land in the diff and fail
``allowed_paths`` and ``max_files_changed``. Each command or preset agent run therefore gets a
fresh folder made with ``mkdtemp`` beside the agent workspaces, shown writable in the sandbox at
the same path, with ``HOME`` and the XDG folders pointing into it (:func:`home_env`). After the
run, what it holds is kept in the run folder for inspection (:func:`snapshot`: regular files
only, read without following a link, each and all together size-capped, as text) and the folder
is removed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.agents.preset import HomeReader
from benchwright.errors import InfraError, UnsafeFile
from benchwright.safefs import Tree, remove_tree
from benchwright.safefs.walk import walk_tree

FILE_CAP = 256 * 1024
"""A file of the home is kept up to this many bytes (its start)."""
TOTAL_CAP = 4 * 1024 * 1024
"""At most this many bytes of the home are kept in all."""
FILES_MAX = 500
"""At most this many files of the home are kept."""
SKIPPED_MAX = 200
"""At most this many entries of ``skipped`` are listed (then a count of the rest)."""
PATH_SHOWN = 300
"""A path in ``skipped`` or ``files`` is cut to this many characters."""
DEPTH_MAX = 32
"""Folders deeper than this are not walked."""
ENTRIES_MAX = 20_000
"""The walk stops after this many entries (files, folders, links...)."""
READ_CAP = 16 * 1024 * 1024
"""A preset's converter reads a file of the home up to this many bytes."""


def make_home(parent: Path) -> Path:
    """A new empty home folder under ``parent`` (a fresh name, never a fixed one another user
    could have made first)."""
    try:
        home = Path(tempfile.mkdtemp(prefix="bw-home-", dir=parent))  # 0o700: no other user reads it
    except OSError as e:
        raise InfraError(f"could not make an agent's home folder in {parent}: {e}") from e
    return home


def home_env(home: str) -> dict[str, str]:
    """HOME and the XDG base folders, all inside the private home."""
    return {"HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_CACHE_HOME": f"{home}/.cache", "XDG_STATE_HOME": f"{home}/.local/state"}


def reader(home: Path, cap: int = READ_CAP) -> HomeReader:
    """Reads a file of ``home`` by its relative path: a regular file only, never through a
    link, at most ``cap`` bytes; None when it is missing or refused."""
    tree = Tree(home)

    def read(rel: str) -> bytes | None:
        try:
            got = tree.read(rel.lstrip("/"), cap, one_name=False)
        except (UnsafeFile, InfraError, ValueError):
            return None
        return got.data if got is not None else None
    return read


@dataclass
class Snapshot:
    """What an agent's home held after its run, as kept in the run folder (``home.json``)."""

    files: dict[str, str] = field(default_factory=dict)
    """Text of each regular file by its path relative to HOME (undecodable bytes replaced; a
    file over :data:`FILE_CAP` cut, with a note)."""
    skipped: list[str] = field(default_factory=list)
    """What was not kept, and why (a link, a FIFO, over the caps)."""


def snapshot(home: Path) -> Snapshot:
    """The home's files, read without following a link, within the caps."""
    out = Snapshot()
    total = 0
    seen = 0
    left_out = 0

    def skip(what: str) -> None:
        nonlocal left_out
        if len(out.skipped) < SKIPPED_MAX:
            out.skipped.append(what)
        else:
            left_out += 1
    try:
        top = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        out.skipped.append(f"the home folder could not be opened: {e.strerror}")
        return out

    def visit(fd: int, rel: str) -> list[str]:
        nonlocal total, seen
        folders: list[str] = []
        if rel.count("/") + 1 > DEPTH_MAX and rel:
            skip(f"{rel[:PATH_SHOWN]}: deeper than {DEPTH_MAX} folders (not walked)")
            return folders
        with os.scandir(fd) as it:
            entries = []
            for entry in it:
                seen += 1
                if seen > ENTRIES_MAX:
                    break
                entries.append(entry.name)
        for name in sorted(entries):
            path = (f"{rel}/{name}" if rel else name)[:PATH_SHOWN]
            try:
                st = os.lstat(name, dir_fd=fd)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                folders.append(name)
                continue
            if not stat.S_ISREG(st.st_mode):
                skip(f"{path}: not a regular file (not followed)")
                continue
            if len(out.files) >= FILES_MAX or total >= TOTAL_CAP:
                skip(f"{path}: over the {FILES_MAX} files / {TOTAL_CAP:,} bytes kept")
                continue
            try:
                file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError:
                skip(f"{path}: could not be opened")
                continue
            try:
                if not stat.S_ISREG(os.fstat(file_fd).st_mode):
                    skip(f"{path}: replaced while read (not followed)")
                    continue
                data = os.read(file_fd, min(FILE_CAP, TOTAL_CAP - total) + 1)
            finally:
                os.close(file_fd)
            keep = min(FILE_CAP, TOTAL_CAP - total)
            text = data[:keep].decode(errors="replace")
            if len(data) > keep:
                text += f"\n[… cut at {keep:,} bytes]"
            out.files[path] = text
            total += min(len(data), keep)
        return folders

    try:
        walk_tree(top, visit, grant=True)
    except (UnsafeFile, OSError) as e:
        skip(f"the walk stopped: {e}")
    finally:
        os.close(top)
    if seen > ENTRIES_MAX:
        skip(f"the walk stopped after {ENTRIES_MAX:,} entries")
    if left_out:
        out.skipped.append(f"… and {left_out:,} more not listed")
    return out


def remove_home(home: Path) -> None:
    remove_tree(home)
