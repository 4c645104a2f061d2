"""Warm servers, one per executor thread: what a language or a criterion keeps running between
samples (a javac, a type checker) in a sandbox session of its own.

:class:`WarmServer` is one such process and its line protocol's life cycle: started on first
use, ready once it says so, one request and one answer line at a time, closed (and started anew
by the next request) whenever it fails; after :data:`MAX_START_FAILURES` failed starts it is not
tried again, and every request answers None (the caller's per-sample path takes over).
:class:`ThreadServers` keeps one per thread."""

from __future__ import annotations

import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from benchwright.errors import InfraError
from benchwright.sandbox.base import Sandbox, SandboxLimits, Session

MAX_START_FAILURES = 3
"""Failed starts after which a server is not tried again."""
COLD_USES = 2
"""A thread's first samples that a tool whose warm start costs more than a sample or two (a
language server, a JVM that loads a rule set) leaves to the command line: a run of a few samples
never pays the start, and a long run loses two command-line samples a thread."""
SERVER_CPU_S = 30 * 24 * 3600
"""A server's CPU limit: it lives for the whole run; each request is timed by its caller."""


class WarmServer:
    """One long-lived process in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, argv: list[str], files: dict[str, bytes], *, ready: bytes,
                 what: str, start_wait_s: float, limits: SandboxLimits) -> None:
        self.sandbox = sandbox
        self.argv = argv
        self.files = files
        self.ready = ready
        """The first line the process writes once it takes requests."""
        self.what = what
        """What it is, for messages."""
        self.start_wait_s = start_wait_s
        self.limits = limits
        self.session: Session | None = None
        self.started = 0
        """How many times a server process was started (1 unless one died, hung or lied)."""
        self.start_failures = 0
        """How many starts failed; after :data:`MAX_START_FAILURES` it is not tried again."""

    def _start(self) -> Session:
        session = self.sandbox.start(self.argv, files=self.files, limits=self.limits)
        self.started += 1
        if session.readline(self.start_wait_s) != self.ready:
            tail = session.stderr_tail()
            session.close()
            raise InfraError(f"{self.what} did not start: {tail or 'no message'}")
        return session

    def ask(self, request: bytes, wait_s: float) -> bytes | None:
        """Send ``request`` (one line) and return the next line of the answer; None when the
        server cannot start, is gone, or says nothing within ``wait_s`` (then it is closed). A
        caller that finds the line is not its answer calls :meth:`close`."""
        if self.session is None or not self.session.alive:
            self.close()
            if self.start_failures >= MAX_START_FAILURES:
                return None
            try:
                self.session = self._start()
            except InfraError:  # the per-sample path still works: the sample is not the harness's loss
                self.start_failures += 1
                return None
        line = self.session.readline(wait_s) if self.session.send(request) else None
        if line is None:
            self.close()
        return line

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class Server(Protocol):
    """What a pooled server offers: the sandbox it runs in, and a way to stop it."""

    @property
    def sandbox(self) -> Sandbox: ...

    def close(self) -> None: ...


S = TypeVar("S", bound=Server)


class ThreadServers(Generic[S]):
    """The servers of one language or criterion object: one per thread, for the sandbox that
    thread last used (another sandbox replaces it). A server is made by ``make`` on first use;
    its process starts when the server first needs it."""

    def __init__(self, make: Callable[[Sandbox], S], cold_uses: int = 0) -> None:
        # a method of the owner is held weakly: the owner's servers stop when it is dropped
        self._make: Callable[[], Callable[[Sandbox], S] | None] = (
            weakref.WeakMethod(make) if inspect.ismethod(make) else lambda: make)
        self._lock = threading.Lock()
        self._servers: dict[int, S] = {}
        self.cold_uses = cold_uses
        """How many of a thread's first requests get no server (their caller takes its per-sample
        path): a server that costs several samples to start is then started only by a thread
        that has more samples to do (see :data:`COLD_USES`)."""
        self._uses: dict[int, int] = {}

    def get(self, sandbox: Sandbox) -> S | None:
        """This thread's server for ``sandbox`` (None when the sandbox has no sessions, or for
        this thread's first :attr:`cold_uses` requests)."""
        if type(sandbox).start is Sandbox.start:
            return None
        thread = threading.get_ident()
        with self._lock:
            uses = self._uses[thread] = self._uses.get(thread, 0) + 1
            if uses <= self.cold_uses:
                return None
            server = self._servers.get(thread)
            old = None
            if server is not None and server.sandbox is not sandbox:
                old, server = server, None
            if server is None:
                make = self._make()
                if make is None:  # the owner is gone
                    return None
                server = self._servers[thread] = make(sandbox)
        if old is not None:
            old.close()
        return server

    def close(self) -> None:
        """Stop every server (they start again when needed)."""
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        for server in servers:
            server.close()

    def __del__(self) -> None:  # an object dropped without close() leaves no server behind
        self.close()
