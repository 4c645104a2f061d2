"""The sandbox interface: run one command over a private folder of files, with limits."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 10.0
    cpu_s: float | None = None
    """CPU seconds (default: wall + 1)."""
    memory_mb: int = 1024
    """Address-space limit. ``0`` disables it (the JVM reserves far more than it uses)."""
    output_bytes: int = 64 * 1024
    file_size_mb: int = 16
    processes: int = 64


@dataclass(frozen=True)
class ProcessResult:
    """What happened to one sandboxed process. A crash or timeout is a value, not an exception."""

    exit_code: int | None
    """Exit status; ``None`` when killed by a signal (see ``signal``)."""
    signal: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    wall_ms: float
    cpu_ms: float
    """User + system CPU time of the whole process tree that was waited for."""
    max_rss_bytes: int
    """Peak resident memory of the largest process in the tree."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Files the command left in its work folder that the caller asked to collect."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Sandbox(abc.ABC):
    """Runs untrusted commands. Implementations are registered under kind ``sandbox``."""

    name: str = "?"
    isolation: str = "none"
    """The isolation level recorded in ``run.yaml`` (e.g. ``rlimits``, ``namespaces``)."""

    @abc.abstractmethod
    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        stdin: bytes | None = None,
        collect: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> ProcessResult:
        """Run ``argv`` in a fresh private folder holding ``files``.

        The environment is clean (only ``env`` and a minimal PATH/LANG); stdin is closed unless
        ``stdin`` is given. The whole process tree is killed when ``limits.wall_s`` passes.

        Raises:
            InfraError: the sandbox itself could not start the command.
        """
