"""Python fork servers: one sandbox and one interpreter per executor thread, a fork per sample.

Starting an interpreter costs 6-10 ms and a sandbox 2-5 ms more; forking a warm process costs
well under a millisecond. So each executor thread keeps a *server* (``pyrunner.py --serve``)
running in a sandbox of its own, and each sample runs in a process forked for it:

* the server imports the standard-library modules tests use most (:data:`PRELOAD`), compiles
  a snippet once, and forks a *zygote* before it reads any job (:class:`.pyrunner.Zygote`);
* the zygote forks each sample process and hands the server (the *judge*) its pipes; the next
  sample is forked as soon as the last one is reaped, before its job is read, so a sample
  never has expected values in its memory, neither its own nor earlier samples';
* the sample process gets a session and a folder of its own and, when the solution is loaded,
  its own limits (address space, CPU time for the whole sample, file size, open files; soft =
  hard);
* the judge judges every test case (see :mod:`.pyrunner`); the zygote then kills every process
  the sample left (it is their subreaper) before it forks the next sample, and the judge
  empties the sample's folder and the sandbox's private ``/tmp``, ``/dev/shm`` and
  ``/dev/mqueue`` before it
  sends the next job, so nothing of one sample is seen by the next;
* each server keeps to one core (round the cores the harness may use), with its zygote and
  samples: a fork's page copies then never wait for another core's TLB to be flushed;
* the runner is never a file of the sandbox: the interpreter starts with :data:`BOOT`, which
  reads the runner's source from stdin, so no sample can change the code that judges it or the
  samples after it;
* every line the judge writes about a job carries the nonce the harness sent with that job
  (``BWR <nonce> {json}``); the harness takes no other line. Judge and zygote are not dumpable,
  so a sample (same uid) can neither read the nonce from their memory nor open their
  descriptors through ``/proc``; the sandbox's PID 1 holds no pipe to the harness and is not
  dumpable either (see :mod:`benchwright.sandbox.isolated`);
* a sample can still kill the zygote or the judge, or change their limits, priority or CPU
  affinity (``prlimit``, ``setpriority``, ``sched_setaffinity`` need only the same uid): that
  fails its own tests (``error``), and the judge ends its ``end`` record with ``restart``. It
  also asks for a restart when, after the clean-up, anything of the sample is left that the next
  sample could meet (:func:`.pyrunner.leftovers`: files that could not be removed, a changed work
  folder, System V IPC objects, a process that is not the server's). The harness then closes the
  sandbox, and the next sample gets a new one: nothing a sample did reaches another.

A server that does not answer within the sample's limits plus :data:`SERVER_MARGIN_S` is
killed with its sandbox; its unfinished tests become ``timeout`` and the next sample gets a new
server. Samples run one after another in a server, never side by side.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.protocol import PREFIX
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits, Session

RUNNER = resources.files("benchwright.lang").joinpath("pyrunner.py").read_bytes()
BOOT = (
    "import os\n"
    "def bw_read(n):\n"
    "    data = b''\n"
    "    while len(data) < n:\n"
    "        chunk = os.read(0, n - len(data))\n"
    "        if not chunk:\n"
    "            raise SystemExit('bw_runner: the runner was cut short')\n"
    "        data += chunk\n"
    "    return data\n"
    "bw_code = compile(bw_read(int(bw_read(12))), 'bw_runner.py', 'exec')\n"
    "del bw_read\n"
    "exec(bw_code, {'__name__': '__main__', '__builtins__': __builtins__})\n"
)
"""What the sandboxed interpreter is started with (``python -I -S -c BOOT``): it reads the
runner's source from its stdin (a 12-digit length, then the source, with plain reads that take
nothing more) and runs it. The runner is never a file in the sandbox, so no sample can change
the code that judges it or the samples after it."""


def boot_input(after: bytes = b"") -> bytes:
    """What to write to the stdin of an interpreter started with :data:`BOOT`: the runner,
    then ``after`` (the one-shot runner's job)."""
    return b"%012d" % len(RUNNER) + RUNNER + after
PRELOAD = ("math", "re", "collections", "itertools", "functools", "heapq", "string", "bisect",
           "typing", "fractions", "statistics", "copy", "operator", "dataclasses", "enum",
           "resource", "ast", "select", "shutil", "random", "hashlib")
"""Imported by the server once, so that samples importing them do not pay for it."""
SERVER_ENV = {"LD_BIND_NOW": "1"}
"""The server's own environment (it drops these before any sample runs): symbols bound at
start, so that no sample writes (copies) the pages where the lazy binder would."""
SCRATCH = ("/tmp", "/dev/shm", "/dev/mqueue")
"""The isolating sandboxes' private writable folders besides the work folder: emptied after
every sample (``/dev/mqueue`` holds POSIX message queues)."""
SERVER_MARGIN_S = 5.0
SERVER_CPU_S = 30 * 24 * 3600
"""The server's own CPU limit (each sample has its own, set when it loads)."""


@dataclass(frozen=True)
class _Key:
    sandbox: int
    interpreter: str | None
    memory_mb: int
    file_size_mb: int
    processes: int


class Server:
    """One fork server in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, limits: SandboxLimits, interpreter: str | None,
                 cpu: int | None = None) -> None:
        self.sandbox = sandbox
        self.cpu = cpu
        """The core this server and its samples keep to (None: any)."""
        self.limits = SandboxLimits(
            wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=limits.memory_mb,
            output_bytes=limits.output_bytes, file_size_mb=limits.file_size_mb,
            processes=limits.processes,
        )
        self.interpreter = interpreter
        self.session: Session | None = None
        self.started = 0
        """How many times a server process was started (1 unless one died or hung)."""
        self.restarts: list[str] = []
        """Why the server asked for a new sandbox after a sample (see ``pyrunner.serve``)."""

    def _start(self) -> Session:
        python = self.interpreter or self.sandbox.python
        session = self.sandbox.start([python, "-I", "-S", "-c", BOOT, "--serve"], files={},
                                     limits=self.limits, env=SERVER_ENV)
        isolated = "hidden-tmp" in self.sandbox.guarantees
        scratch = list(SCRATCH) if isolated else []
        config: dict[str, Any] = {"preload": list(PRELOAD), "scratch": scratch,
                                  "isolated": isolated}
        if self.cpu is not None:
            config["cpu"] = self.cpu
        if not session.send(boot_input(json.dumps(config).encode() + b"\n")):
            tail = session.stderr_tail()
            session.close()
            raise InfraError(f"the Python fork server did not start: {tail or 'no message'}")
        self.started += 1
        return session

    def run(self, job: dict[str, Any], wait_s: float) -> tuple[list[dict[str, Any]], ProcessResult]:
        """Send one job; its records and a process result for the sample.

        The job gets a fresh nonce, and only lines that carry it count: a line that does not
        (written by anything but the judge, or left from an earlier job) is ignored."""
        nonce = secrets.token_hex(16)
        prefix = f"{PREFIX}{nonce} ".encode()
        data = json.dumps({**job, "nonce": nonce}).encode() + b"\n"
        start = time.perf_counter()
        session = self.session
        if session is None or not session.alive:
            if session is not None:
                session.close()
            session = self.session = self._start()
        if not session.send(data):  # died between jobs (its thread's end, a kill): once more
            session.close()
            session = self.session = self._start()
            if not session.send(data):
                tail = session.stderr_tail()
                self.close()
                raise InfraError(f"the Python fork server does not take jobs: {tail}")
        records: list[dict[str, Any]] = []
        deadline = time.monotonic() + wait_s
        timed_out = died = False
        while True:
            line = session.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                timed_out = session.alive
                died = not timed_out
                self.close()  # stuck or gone: the next job gets a new server
                break
            if not line.startswith(prefix):
                continue
            try:
                rec = json.loads(line[len(prefix):])
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            if rec.get("end"):
                if rec.get("restart"):  # the sample left or changed something: a new sandbox
                    self.restarts.append(str(rec["restart"]))
                    self.close()
                break
            records.append(rec)
        done = next((r for r in records if r.get("done")), {})
        exit_code = done.get("sample_exit")
        proc = ProcessResult(
            exit_code=exit_code if isinstance(exit_code, int) and exit_code >= 0 else None,
            signal=-exit_code if isinstance(exit_code, int) and exit_code < 0 else (9 if died else None),
            stdout=b"", stderr=b"", timed_out=timed_out,
            wall_ms=(time.perf_counter() - start) * 1000,
            cpu_ms=float(done.get("cpu_ms") or 0.0),
            max_rss_bytes=int(done.get("max_rss_bytes") or 0),
        )
        return records, proc

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class ServerPool:
    """The fork servers of one language object: one per thread, for the sandbox and limits
    it last used (another sandbox or other limits replace it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[int, tuple[_Key, Server]] = {}
        self._cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._next_cpu = os.getpid()  # not 0: other benchwright processes start elsewhere

    def get(self, sandbox: Sandbox, limits: SandboxLimits, interpreter: str | None) -> Server | None:
        """This thread's server for ``sandbox`` (None when the sandbox has no sessions)."""
        if type(sandbox).start is Sandbox.start:
            return None
        thread = threading.get_ident()
        key = _Key(id(sandbox), interpreter, limits.memory_mb, limits.file_size_mb,
                   limits.processes)
        with self._lock:
            entry = self._servers.get(thread)
            old = None
            if entry is not None and (entry[0] != key or entry[1].sandbox is not sandbox):
                old, entry = entry[1], None
            if entry is None:
                entry = self._servers[thread] = (key, Server(sandbox, limits, interpreter,
                                                             self._take_cpu()))
        if old is not None:
            old.close()
        return entry[1]

    def _take_cpu(self) -> int | None:
        """The next core, round the cores this process may use: each server keeps to one, so
        the page copies of its forks never need another core's TLB flushed (15-20 % faster
        on this machine's 2-core VM)."""
        if not self._cpus:
            return None
        cpu = self._cpus[self._next_cpu % len(self._cpus)]
        self._next_cpu += 1
        return cpu

    def close(self) -> None:
        with self._lock:
            servers = [server for _, server in self._servers.values()]
            self._servers.clear()
        for server in servers:
            server.close()

    def __del__(self) -> None:  # a language dropped without close() leaves no server behind
        self.close()
