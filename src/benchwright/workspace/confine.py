"""Where a path named inside a YAML file may lead.

A path that a config, a task source, a scenario or ``benchwright.yaml`` names (task sources,
scenarios, agents' files, a scenario's repository, a replay provider's recordings...) is
resolved (``..`` and symbolic links) and must then lie inside the workspace, or inside a folder
the workspace settings list under ``allowed_folders``. A ``.benchwright`` folder (the
workspace's tokens, UI state and cache) is never allowed, even inside the workspace.

A path that leads anywhere else is refused before anything reads it, with the same message
whether it exists or not, and the problem names the file, the place in the document and the
fix, never the outside file's content nor where a link leads. Paths given on the command line
are the user's own and are not confined.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import InputError, Problem

STATE = ".benchwright"
"""The workspace's own state (tokens, UI state, cache): never named by a file."""
FIX = ("paths in YAML files stay inside the workspace: move it there, or have an admin list its "
       "folder under allowed_folders in benchwright.yaml")


class PathRefused(InputError):
    """A path named in a file leads outside the workspace and the allowed folders, or into
    ``.benchwright``, or cannot be looked at (a link loop, a name too long)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__([problem])
        self.problem = problem


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def confine(value: str | Path, *, base: Path, workspace: Path, allowed: Sequence[Path], field: str,
            file: Path | str, line: int | None = None) -> Path:
    """The path ``value`` names (relative ones from ``base``), resolved, when it lies inside
    ``workspace`` or one of the ``allowed`` folders and not in a ``.benchwright`` folder.
    Whether it exists is not checked (the caller says when it is missing).

    Raises:
        PathRefused: it leads elsewhere, or cannot be looked at; the problem is located at
            ``field`` (its place in the document, e.g. ``task_sources[0]``) and ``line`` of
            ``file``.
    """
    text = str(value)

    def refused(message: str, hint: str = FIX) -> PathRefused:
        return PathRefused(Problem(str(file), message, path=field, line=line, hint=hint))

    if not text or "\x00" in text:
        raise refused(f"{text!r} is not a path", hint="write a path relative to the workspace")
    try:
        given = Path(text).expanduser()
        joined = given if given.is_absolute() else base / given
        resolved = joined.resolve()
        folders = [workspace.resolve(), *(Path(a).resolve() for a in allowed)]
    except (OSError, RuntimeError, ValueError):  # a link loop, no home for ~
        raise refused(f"{text!r} cannot be resolved to a path (a loop of symbolic links?)") from None
    home = next((f for f in folders if _within(resolved, f)), None)
    if home is None:
        lexical = Path(os.path.normpath(joined if joined.is_absolute() else Path.cwd() / joined))
        through = " through a symbolic link" if any(_within(lexical, f) for f in folders) else ""
        raise refused(f"{text!r} leads outside the workspace{through}")
    if any(STATE in resolved.relative_to(f).parts for f in folders if _within(resolved, f)):
        raise refused(f"{text!r} leads into {STATE}/, which holds the workspace's tokens and state "
                      "and is never read for a file", hint="name a file elsewhere in the workspace")
    try:  # inside now: whether it exists is no secret, but a name too long must not crash a caller
        resolved.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        raise refused(f"{text!r} cannot be looked at ({e.strerror})", hint="check the path") from None
    return resolved


@dataclass(frozen=True)
class Confinement:
    """The folders paths named inside a workspace's files may lead to: the workspace, and the
    folders its settings list under ``allowed_folders``."""

    workspace: Path
    allowed: tuple[Path, ...] = ()

    def path(self, value: str | Path, *, base: Path, field: str, file: Path | str,
             line: int | None = None) -> Path:
        """:func:`confine` with this workspace and its allowed folders."""
        return confine(value, base=base, workspace=self.workspace, allowed=self.allowed, field=field,
                       file=file, line=line)

    def locate(self, value: str | Path, *, bases: Sequence[Path], field: str, file: Path | str,
               line: int | None = None) -> Path:
        """``value`` tried from each of ``bases`` in turn: the first allowed path that exists;
        when none exists, the first allowed one (the caller reports it missing).

        Raises:
            PathRefused: no allowed path exists and some base leads outside (the first such
                problem): whether an outside path exists never changes the answer.
        """
        kept: list[Path] = []
        refusal: PathRefused | None = None
        for base in dict.fromkeys(bases):
            try:
                path = self.path(value, base=base, field=field, file=file, line=line)
            except PathRefused as e:
                refusal = refusal or e
                continue
            if path.exists():
                return path
            kept.append(path)
        if refusal is not None:
            raise refusal
        return kept[0]

    def contains(self, path: Path) -> bool:
        """Whether ``path`` (resolved here) is one a file may name."""
        try:
            self.path(path, base=self.workspace, field="", file="")
        except PathRefused:
            return False
        return True
