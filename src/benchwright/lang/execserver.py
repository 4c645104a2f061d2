"""Exec servers: a kept program's tests without the cost of a new sandbox.

A sample whose program was kept from an earlier sample (:mod:`.buildcache`) has nothing left
to build: its cost is starting a sandbox (a new mount, PID and user namespace, about as long as
running every test) plus the judge. So each executor thread keeps one sandbox session running
``pyrunner.py --exec`` (the same runner as the Python fork server, started the same way: its
source comes through stdin, never from a file a command could change), and runs such a
sample's command there, as :meth:`Sandbox.run <benchwright.sandbox.base.Sandbox.run>` would:

* the command's files are written to the session's work folder (``/work``, where a run of its
  own would have them), and it runs there in a session of its own, with the rlimits of its
  own run (:func:`benchwright.sandbox.rlimit.rlimit_values`), its stdin, and its output capped
  and its wall time enforced by the server;
* afterwards every process it left is killed (the server is their subreaper), the work folder
  and the private ``/tmp``, ``/dev/shm`` and ``/dev/mqueue`` are emptied, and the server
  checks that nothing is left that the next command could meet (the checks of the Python fork
  server: files that could not be removed, a changed work folder, System V IPC objects, another
  process); if anything is, or a command changed the server's limits, priority or affinity
  (``prlimit`` needs only the same uid), the server ends and the next command gets a new
  sandbox;
* the answer is one line carrying a nonce the harness sent with the job: the server is not
  dumpable, and no command holds its stdout, so no command can forge it;
* a server that dies while a command runs (the command killed it) gives no answer: the harness
  then runs the command in a sandbox of its own, as it would without a server.

Only the isolating sandboxes (a PID namespace of their own, a private ``/tmp``) get a server:
elsewhere the checks could not see everything a command leaves. A thread's first kept-program
sample runs on its own (:data:`COLD_USES`): a run with few repeats never pays a server's start.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.protocol import PREFIX
from benchwright.lang.pyserver import BOOT, SCRATCH, SERVER_CPU_S, boot_input
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits, Session
from benchwright.sandbox.rlimit import rlimit_values
from benchwright.sandbox.servers import ThreadServers

COLD_USES = 1
"""A thread's first kept-program samples that run in a sandbox of their own."""
ANSWER_MARGIN_S = 5.0
"""How long past a command's wall time the harness waits for the server's answer."""
def serves(sandbox: Sandbox) -> bool:
    """Whether commands of ``sandbox`` may run in an exec server: it has sessions and isolates
    (its own PID namespace and ``/tmp``: the server's checks see all a command leaves)."""
    return (getattr(type(sandbox), "start", Sandbox.start) is not Sandbox.start
            and "hidden-tmp" in sandbox.guarantees)


@dataclass
class ServerStats:
    """What the exec servers of one language object did (for tests and benchmarks)."""

    started: int = 0
    """Server processes started (each in a new sandbox)."""
    served: int = 0
    """Commands a server ran and answered."""
    restarts: list[str] = field(default_factory=list)
    """Why a server asked for a new sandbox after a command."""


class ExecServer:
    """One exec server in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, stats: ServerStats | None = None) -> None:
        self.sandbox = sandbox
        self.session: Session | None = None
        self._limits: tuple[int, int] | None = None
        self.stats = stats if stats is not None else ServerStats()

    def _start(self, limits: SandboxLimits) -> Session:
        session = self.sandbox.start(
            [self.sandbox.python, "-I", "-S", "-c", BOOT, "--exec"], files={},
            limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                 output_bytes=limits.output_bytes,
                                 file_size_mb=limits.file_size_mb, processes=limits.processes))
        if not session.send(boot_input(json.dumps({"scratch": list(SCRATCH)}).encode() + b"\n")):
            tail = session.stderr_tail()
            session.close()
            raise InfraError(f"the exec server did not start: {tail or 'no message'}")
        self.stats.started += 1
        return session

    def run(self, argv: list[str], *, files: dict[str, bytes], limits: SandboxLimits,
            stdin: bytes | None = None, collect: tuple[str, ...] = ()) -> ProcessResult | None:
        """Run ``argv`` as ``sandbox.run`` would (same arguments); None when the server cannot
        (it does not start, or died before it answered): the caller runs it itself."""
        key = (limits.file_size_mb, limits.processes)
        if self.session is not None and (not self.session.alive or key != self._limits):
            self.close()
        try:
            if self.session is None:
                self.session, self._limits = self._start(limits), key
        except InfraError:
            return None
        session = self.session
        nonce = secrets.token_hex(16)
        job = {
            "nonce": nonce, "argv": argv,
            "files": {name: base64.b64encode(data).decode() for name, data in files.items()},
            "stdin": None if stdin is None else base64.b64encode(stdin).decode(),
            "rlimits": rlimit_values(limits, processes=True),
            "output_bytes": limits.output_bytes, "wall_s": limits.wall_s,
            "collect": list(collect), "collect_bytes": 16 * limits.output_bytes,
        }
        start = time.perf_counter()
        if not session.send(json.dumps(job).encode() + b"\n"):
            self.close()
            return None
        prefix = f"{PREFIX}{nonce} ".encode()
        deadline = time.monotonic() + limits.wall_s + ANSWER_MARGIN_S
        answer: dict[str, Any] | None = None
        while answer is None:
            line = session.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                hung = session.alive
                self.close()
                if not hung:
                    return None  # it died (the command killed it): the caller runs it anew
                return ProcessResult(exit_code=None, signal=9, stdout=b"", stderr=b"",
                                     timed_out=True, wall_ms=(time.perf_counter() - start) * 1000,
                                     cpu_ms=0.0, max_rss_bytes=0)
            if line.startswith(prefix):
                try:
                    got = json.loads(line[len(prefix):])
                except ValueError:
                    continue
                answer = got if isinstance(got, dict) else None
        if "restart" in answer:
            self.stats.restarts.append(str(answer["restart"]))
            self.close()
        if "infra" in answer:
            return None
        self.stats.served += 1
        status = int(answer["status"])
        return ProcessResult(
            exit_code=status if status >= 0 else None,
            signal=-status if status < 0 else None,
            stdout=base64.b64decode(answer["stdout"]),
            stderr=base64.b64decode(answer["stderr"]),
            timed_out=bool(answer["timed_out"]),
            wall_ms=float(answer["wall_ms"]),
            cpu_ms=float(answer["cpu_ms"]),
            max_rss_bytes=int(answer["max_rss_bytes"]),
            files={name: base64.b64decode(data) for name, data in answer["files"].items()},
        )

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class ExecServers:
    """The exec servers of one language object: one per thread (see :class:`ThreadServers`)."""

    def __init__(self) -> None:
        self.stats = ServerStats()
        self._servers: ThreadServers[ExecServer] = ThreadServers(self._make,
                                                                 cold_uses=COLD_USES)

    def _make(self, sandbox: Sandbox) -> ExecServer:
        return ExecServer(sandbox, self.stats)

    def run(self, sandbox: Sandbox, argv: list[str], *, files: dict[str, bytes],
            limits: SandboxLimits, stdin: bytes | None = None,
            collect: tuple[str, ...] = ()) -> ProcessResult:
        """``sandbox.run(...)``, in this thread's exec server where there is one."""
        server = self._servers.get(sandbox) if serves(sandbox) else None
        if server is not None:
            result = server.run(argv, files=files, limits=limits, stdin=stdin, collect=collect)
            if result is not None:
                return result
        return sandbox.run(argv, files=files, limits=limits, stdin=stdin, collect=collect)

    def close(self) -> None:
        self._servers.close()
