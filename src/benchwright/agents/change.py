"""What an agent changed: the cumulative diff of its workspace against the baseline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Status = Literal["added", "modified", "deleted", "renamed", "type_changed"]


@dataclass(frozen=True)
class FileChange:
    """One changed file. Paths are relative to the workspace, with ``/``."""

    path: str
    status: Status
    old_path: str | None = None
    """The path before a rename."""
    binary: bool = False
    added: tuple[str, ...] = ()
    """The lines the change adds (text files), without their newline."""
    removed: tuple[str, ...] = ()
    """The lines the change removes (text files)."""


@dataclass(frozen=True)
class Change:
    """Every file the agent added, changed, deleted or renamed (untracked and ignored files
    included), and the whole patch."""

    files: tuple[FileChange, ...] = ()
    patch: str = ""
    """``git diff`` of baseline against the final tree (binary files as one line each)."""
    stat: dict[str, int] = field(default_factory=dict)
    """``files``, ``added`` and ``removed`` line counts."""
    violations: tuple[str, ...] = ()
    """What the harness refused while it took the change (a diff larger than it reads, a git
    link to another repository...): each fails the run badge."""

    def paths(self) -> list[str]:
        """Every path the change touched: both sides of a rename."""
        out: list[str] = []
        for f in self.files:
            if f.old_path is not None and f.old_path not in out:
                out.append(f.old_path)
            if f.path not in out:
                out.append(f.path)
        return out

    def touched(self, path: str) -> FileChange | None:
        """The change of ``path`` (either side of a rename), or None."""
        return next((f for f in self.files if path in (f.path, f.old_path)), None)
