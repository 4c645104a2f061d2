"""The scorer interface: a deterministic check of an agent's run, in the still-live workspace.

A scorer type is a plug-in registered under kind ``scorer`` by its type name (``command``,
``allowed_paths``...); the factory takes no arguments, and :meth:`Scorer.score` gets the
scenario's spec of that scorer (:mod:`.scenario`) and the run's :class:`ScorerContext`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchwright.agents.change import Change
from benchwright.agents.scenario import ScorerBase
from benchwright.safefs import Tree

ScorerVerdict = Literal["PASS", "FAIL", "N/A"]
OUTPUT_TAIL = 4000
"""How much of a command's output a record keeps (its end)."""
READ_CAP = 1024 * 1024
"""What :attr:`ScorerContext.read` returns of a file at most."""


@dataclass(frozen=True)
class CommandResult:
    """A shell command run in the live workspace's sandbox."""

    exit_code: int | None
    """None: killed (timeout or signal)."""
    timed_out: bool
    output: str
    """The tail of stdout and stderr together."""
    wall_ms: float


CommandRunner = Callable[[str, int], CommandResult]
"""``run(command, timeout_s)``: run a shell command in the workspace's sandbox (no network)."""


@dataclass(frozen=True)
class ScorerContext:
    """What a scorer may look at: the workspace as the agent left it (hidden files back), the
    change against the baseline, and a way to run commands in the workspace's sandbox."""

    workspace: Path
    """The tree on the host. The agent wrote it: read its files through ``read``, never by
    opening paths under it (a symbolic link there may lead anywhere on the host); commands run
    through ``run``."""
    change: Change
    run: CommandRunner
    baseline: Callable[[str], str | None] = field(default=lambda path: None)
    """The baseline text of a path (None: it did not exist, or is binary)."""

    def read(self, path: str) -> bytes | None:
        """The first :data:`READ_CAP` bytes of the regular file ``path`` of the tree (None:
        there is none), through :class:`benchwright.safefs.Tree`.

        Raises:
            UnsafeFile: a symbolic link on the way or at the end, a FIFO, a folder... (the
                scorer then could not run).
        """
        got = Tree(self.workspace).read(path, READ_CAP)
        return got.data if got is not None else None


@dataclass
class ScorerResult:
    verdict: ScorerVerdict
    score: float
    """0.0-1.0 (N/A: 0, and it counts nowhere)."""
    output: str = ""
    """What it found, or the command's output tail."""
    details: dict[str, Any] = field(default_factory=dict)


class Scorer(abc.ABC):
    """One scorer type."""

    type: str = "?"

    @abc.abstractmethod
    def score(self, spec: ScorerBase, ctx: ScorerContext) -> ScorerResult:
        """Check the run. A failure of the check is a FAIL result; only a failure of the
        harness raises (InfraError)."""

