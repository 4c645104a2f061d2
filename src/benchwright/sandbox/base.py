"""The sandbox interface: run one command over a private folder of files, with limits."""

from __future__ import annotations

import abc
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

GUARANTEES: dict[str, str] = {
    "no-network": "no network: a network namespace of its own with only `lo`",
    "hidden-home": "home folders (/root, /home) are invisible",
    "hidden-tmp": "the host's /tmp (and /var/tmp) is invisible; /tmp is private",
    "hidden-workspace": "nothing outside the system and toolchain folders is visible "
                        "(so the workspace and the results are not)",
    "read-only-system": "the system and toolchain folders are read-only; nothing outside the "
                        "work folder and the private /tmp and /dev/shm can be written",
    "clean-env": "a clean environment: only PATH, LANG, HOME, TMPDIR and what the caller passes",
    "limits": "limits on wall time, CPU time, memory, file size and captured output",
    "process-limit": "a limit on processes and threads (RLIMIT_NPROC binds: not root)",
    "stdin-closed": "stdin is closed unless the caller passes input",
    "private-workdir": "a fresh private writable work folder, removed afterwards",
    "group-killed": "the command's process group is killed when it ends or times out",
    "tree-killed": "the whole process tree dies with the command, setsid daemons included",
    "unprivileged": "the command never runs as root on the host (a uid of its own per run "
                    "when the harness is root)",
    "init-out-of-reach": "the sandbox's PID 1 holds no pipe to the harness, and no process of "
                         "the sandbox can ptrace it or open its /proc files",
}
"""Everything a backend may promise (``Sandbox.guarantees``); the conformance suite in
``tests/sandbox/test_conformance.py`` has a hostile program for each."""


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
class Mount:
    """A host folder shown inside the sandbox by :meth:`Sandbox.run_in` (a coding agent's
    tools, its private home)."""

    source: Path
    """The host folder (must exist; the sandbox's uid must be able to reach it)."""
    target: str | None = None
    """Where it is inside (an absolute path); None: at the same path as on the host. Only
    backends with :attr:`Sandbox.remaps` can show it elsewhere."""
    writable: bool = False
    """Read-write (handed to the run's uid like the work folder) instead of read-only."""

    @property
    def inside(self) -> str:
        return self.target or str(self.source)


@dataclass(frozen=True)
class Bridge:
    """A TCP port on the sandbox's loopback that reaches a Unix socket of the host: how an agent
    without network reaches the model endpoint benchwright serves for it, and nothing else."""

    port: int
    """``127.0.0.1:port`` inside the sandbox (with the host's network: the host's own port)."""
    socket: Path
    """The host's Unix socket it forwards to. Its folder is shown read-only inside (at
    ``/bw-bridge`` in the isolating backends), so give the socket a folder of its own; when the
    harness is root the run's uid must connect to it: make the socket ``0o666`` in a ``0o711``
    folder every user can pass through."""


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


class Session(abc.ABC):
    """A long-lived sandboxed process (a batch server): lines in on its stdin, lines out on its
    stdout. Made by :meth:`Sandbox.start`; one thread uses it at a time."""

    @property
    @abc.abstractmethod
    def alive(self) -> bool:
        """False once the process has ended or was killed."""

    @abc.abstractmethod
    def send(self, data: bytes) -> bool:
        """Write ``data`` to the process's stdin; False when it is gone."""

    @abc.abstractmethod
    def readline(self, timeout_s: float) -> bytes | None:
        """The next line of its stdout (without the newline); None after ``timeout_s`` or at
        its end (then ``alive`` is False)."""

    @abc.abstractmethod
    def stderr_tail(self) -> str:
        """The last of what it wrote to stderr (for error messages after it died)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Kill the process and everything in the sandbox, and remove its folder."""


class Sandbox(abc.ABC):
    """Runs untrusted commands. Implementations are registered under kind ``sandbox``."""

    name: str = "?"
    isolation: str = "none"
    """The isolation level recorded in ``run.yaml`` (e.g. ``rlimits``, ``namespaces``)."""
    guarantees: frozenset[str] = frozenset()
    """What this backend promises (names from :data:`GUARANTEES`)."""
    remaps: bool = False
    """Whether a :class:`Mount` can be shown at another path than the host's."""
    install_hint: str = ""
    """How to install what this backend needs, for error messages and ``benchwright doctor``."""
    work_path: str | None = None
    """The work folder's path as every command sees it (None: it differs from one command to
    the next). A program that records where it was built (Go's file names) runs the same in a
    later command only when this is set."""

    def unavailable(self) -> str | None:
        """Why this backend cannot run here (a missing program...), or None when it may.

        Cheap and static; :func:`benchwright.sandbox.select.availability` also runs ``true``
        through the backend before choosing it."""
        return None

    @property
    def python(self) -> str:
        """The Python interpreter to run inside this sandbox (standard library only).

        Raises:
            InfraError: this sandbox has no Python to offer.
        """
        return sys.executable

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
        undumpable: bool = False,
    ) -> ProcessResult:
        """Run ``argv`` in a fresh private folder holding ``files``.

        The environment is clean (only ``env`` and a minimal PATH/LANG); stdin is closed unless
        ``stdin`` is given. The whole process tree is killed when ``limits.wall_s`` passes.
        ``collect``: files of the work folder to return (regular files only, never through a
        link, at most ``16 * limits.output_bytes`` each). ``undumpable``: the command (a
        program of the system, e.g. a shell running a judge) starts non-dumpable, so that the
        processes it starts cannot read its memory or open its descriptors through ``/proc``
        (backends that isolate nothing ignore it).

        Raises:
            InfraError: the sandbox itself could not start the command.
        """

    def run_in(
        self,
        folder: Path,
        argv: list[str],
        *,
        limits: SandboxLimits,
        env: dict[str, str] | None = None,
        network: bool = False,
        stdin: bytes | None = None,
        mounts: Sequence[Mount] = (),
        bridge: Bridge | None = None,
    ) -> ProcessResult:
        """Run ``argv`` in ``folder``, a host folder that outlives the run (a coding agent's
        workspace: set-up, the agent and the scorers each run in it in turn), under the same
        isolation as :meth:`run`; it is the work folder inside, writable, and the only host
        folder the command can change besides the writable ``mounts``. ``network`` grants the
        host's network (an agent's API). ``mounts``: more host folders shown inside (a program
        in a read-only mount resolves like a system one). ``bridge``: without ``network``,
        ``127.0.0.1:bridge.port`` inside reaches ``bridge.socket`` on the host.

        Raises:
            NotImplementedError: this backend cannot run in a given folder.
            InfraError: the sandbox itself could not start the command.
        """
        raise NotImplementedError(f"sandbox {self.name!r} cannot run in a given folder")

    def start(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        env: dict[str, str] | None = None,
    ) -> Session:
        """Start ``argv`` as a long-lived :class:`Session` in a fresh private folder, under the
        same isolation as :meth:`run`; ``limits.wall_s`` does not apply (the caller times its
        requests and closes the session).

        Raises:
            NotImplementedError: this backend only runs one command at a time (callers fall back
                to :meth:`run`).
            InfraError: the sandbox itself could not start the command.
        """
        raise NotImplementedError(f"sandbox {self.name!r} has no long-lived sessions")
