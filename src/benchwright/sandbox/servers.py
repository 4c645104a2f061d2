"""Warm servers, one per executor thread: what a language or a criterion keeps running between
samples (a javac, a type checker) in a sandbox session of its own."""

from __future__ import annotations

import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from benchwright.sandbox.base import Sandbox


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

    def __init__(self, make: Callable[[Sandbox], S]) -> None:
        # a method of the owner is held weakly: the owner's servers stop when it is dropped
        self._make: Callable[[], Callable[[Sandbox], S] | None] = (
            weakref.WeakMethod(make) if inspect.ismethod(make) else lambda: make)
        self._lock = threading.Lock()
        self._servers: dict[int, S] = {}

    def get(self, sandbox: Sandbox) -> S | None:
        """This thread's server for ``sandbox`` (None when the sandbox has no sessions)."""
        if type(sandbox).start is Sandbox.start:
            return None
        thread = threading.get_ident()
        with self._lock:
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
