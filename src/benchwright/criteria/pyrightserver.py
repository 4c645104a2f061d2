"""The harness's side of a warm basedpyright (see :mod:`.pyrightlsp`, which runs in the sandbox).

basedpyright's command line starts Node and loads the type stubs of the standard library for
every sample: about 1.2 s of a sample's 1.7 s of Python criteria. Its language server, kept up
per executor thread in a sandbox session of its own, checks a sample in tens of milliseconds
once warm, with the same configuration file and the same interpreter. The sample's text is sent
over the session's stdin and never written to a file; the server's findings come back as the
command line's JSON diagnostics, for this request's nonce only.

A server that does not answer within the criterion's time limit, dies, or answers anything else
is closed with its sandbox; that sample is checked by the command line, as before, and the next
one gets a new server.
"""

from __future__ import annotations

import json
import secrets
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.sandbox.base import Sandbox, SandboxLimits, Session

ADAPTER = resources.files("benchwright.criteria").joinpath("pyrightlsp.py").read_bytes()
ADAPTER_FILE = "bw_pyright.py"
START_WAIT_S = 120.0
"""How long the language server may take to start (Node and the stubs: a few seconds)."""
SERVER_CPU_S = 30 * 24 * 3600
"""The server's CPU limit: it lives for the whole run; each check is timed by the harness."""


class PyrightServer:
    """One language server in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, python: str, langserver: str, config: bytes,
                 wait_s: float) -> None:
        self.sandbox = sandbox
        self.argv = [python, "-I", ADAPTER_FILE, langserver, sandbox.python]
        self.config = config
        self.wait_s = wait_s
        """How long one check may take before the sample goes to the command line."""
        self.session: Session | None = None
        self.started = 0
        """How many times a server process was started (1 unless one died, hung or lied)."""

    def _start(self) -> Session:
        limits = SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                               file_size_mb=64, processes=256)
        session = self.sandbox.start(self.argv, limits=limits, files={
            ADAPTER_FILE: ADAPTER, "pyrightconfig.json": self.config})
        self.started += 1
        if session.readline(START_WAIT_S) != b"BWP ready":
            tail = session.stderr_tail()
            session.close()
            raise InfraError(f"the basedpyright language server did not start: {tail or 'no message'}")
        return session

    def check(self, code: str) -> list[dict[str, Any]] | None:
        """The diagnostics of ``code``, as ``--outputjson`` lists them; None when the server
        failed on it (it is closed: the caller runs the command line).

        Raises:
            InfraError: the server cannot start at all.
        """
        if self.session is None or not self.session.alive:
            self.close()
            self.session = self._start()
        nonce = secrets.token_hex(16)
        if not self.session.send(json.dumps({"nonce": nonce, "code": code}).encode() + b"\n"):
            self.close()
            return None
        line = self.session.readline(self.wait_s)
        prefix = f"BWP {nonce} ".encode()
        found: Any = None
        if line is not None and line.startswith(prefix):
            try:
                found = json.loads(line[len(prefix):])
            except ValueError:
                found = None
        if not isinstance(found, list) or not all(isinstance(d, dict) for d in found):
            self.close()
            return None
        return found

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
