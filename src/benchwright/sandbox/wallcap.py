"""``limits.sample_timeout_s``: a sandbox wrapper that caps the wall limit of every command.

The run engine wraps its sandbox once per run (:func:`wall_capped`), so a runner that keeps a
server per sandbox object (Python's fork servers) keeps it. :meth:`Sandbox.run` is capped for
every runner, whether it knows of the cap or not. A long-lived session (:meth:`Sandbox.start`)
times its own requests, so a runner that runs samples through one bounds its wait for a
sample by :func:`sample_cap_s`.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits, Session


class WallCap(Sandbox):
    """A sandbox that passes every command on with its wall limit capped at ``cap_s``
    (``limits.sample_timeout_s``), and remembers, per thread, the wall limit the last one got."""

    def __init__(self, inner: Sandbox, cap_s: float) -> None:
        self.inner = inner
        self.cap_s = cap_s
        self.name = inner.name
        self.isolation = inner.isolation
        self.guarantees = inner.guarantees
        self.install_hint = inner.install_hint
        self._last = threading.local()

    def unavailable(self) -> str | None:
        return self.inner.unavailable()

    @property
    def python(self) -> str:
        return self.inner.python

    def forget(self) -> None:
        """Forget this thread's last command (before a sample, so none of another counts)."""
        self._last.wall_s = None

    def last_wall_s(self) -> float | None:
        """The wall limit of this thread's last command."""
        wall = getattr(self._last, "wall_s", None)
        return wall if isinstance(wall, float | int) else None

    def run(self, argv: list[str], *, files: dict[str, bytes], limits: SandboxLimits,
            stdin: bytes | None = None, collect: tuple[str, ...] = (),
            env: dict[str, str] | None = None, undumpable: bool = False) -> ProcessResult:
        if limits.wall_s > self.cap_s:
            limits = replace(limits, wall_s=self.cap_s)
        self._last.wall_s = limits.wall_s
        more = {"undumpable": True} if undumpable else {}  # a plug-in older than the keyword
        return self.inner.run(argv, files=files, limits=limits, stdin=stdin, collect=collect,
                              env=env, **more)


class _WallCapSessions(WallCap):
    """A :class:`WallCap` of a sandbox that has long-lived sessions: they pass through."""

    def start(self, argv: list[str], *, files: dict[str, bytes], limits: SandboxLimits,
              env: dict[str, str] | None = None) -> Session:
        return self.inner.start(argv, files=files, limits=limits, env=env)


def wall_capped(sandbox: Sandbox, cap_s: float | None) -> Sandbox:
    """``sandbox`` with every sample's wall limit capped at ``cap_s`` (None: ``sandbox`` itself)."""
    if cap_s is None or (isinstance(sandbox, WallCap) and sandbox.cap_s == cap_s):
        return sandbox
    if type(sandbox).start is Sandbox.start:
        return WallCap(sandbox, cap_s)
    return _WallCapSessions(sandbox, cap_s)


def sample_cap_s(sandbox: Sandbox) -> float | None:
    """The most one sample may take in ``sandbox`` (``limits.sample_timeout_s``), if capped."""
    return sandbox.cap_s if isinstance(sandbox, WallCap) else None
