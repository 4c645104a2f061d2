"""Warm analysis tools: one server per executor thread, in a sandbox session of its own.

A tool's command line pays its start-up for every sample: basedpyright starts Node and loads the
standard library's stubs (about 1.2 s), bandit imports itself and its plug-ins (about 0.17 s).
Kept up, the same tool checks a sample in milliseconds. Each such tool has a small script that
runs in the sandbox with the tools' Python (:mod:`.pyrightlsp`, :mod:`.banditrunner`): it starts
or imports the tool, says ``<TAG> ready``, then for each line on its stdin
(``{"nonce": ..., "code": ...}``) checks that code exactly as the command line would and answers
one line, ``<TAG> <nonce> <json>``, the report the command line would write.

The harness sends each sample's text over the session's stdin; it takes only a line with its own
request's nonce, and only a report of the expected shape. A server that does not answer within
the criterion's time limit, dies, or answers anything else is closed with its sandbox: that
sample is checked by the command line, as before, and the next one gets a new server.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import SERVER_CPU_S, WarmServer

START_WAIT_S = 120.0
"""How long a tool may take to start (Node and the stubs: a few seconds)."""


class ToolServer(WarmServer):
    """One warm tool in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, argv: list[str], files: dict[str, bytes], tag: str,
                 wait_s: float, tool: str) -> None:
        super().__init__(sandbox, argv, files, ready=f"{tag} ready".encode(),
                         what=f"{tool} (as a warm tool)", start_wait_s=START_WAIT_S,
                         limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                              file_size_mb=64, processes=256))
        self.tag = tag
        """What starts each line the tool's script writes (``BWP``, ``BWB``)."""
        self.wait_s = wait_s
        """How long one check may take before the sample goes to the command line."""

    def check(self, code: str) -> Any:
        """The tool's report on ``code`` (parsed JSON); None when the server failed on it (it
        is closed: the caller runs the command line).

        A server that cannot start also answers None (the command line then says what is
        wrong, if anything is).
        """
        return self.request({"code": code}, self.wait_s)

    def request(self, fields: dict[str, Any], wait_s: float) -> Any:
        """The answer (parsed JSON) to a request of ``fields`` and a fresh nonce, within
        ``wait_s``; None as for :meth:`check`."""
        nonce = secrets.token_hex(16)
        line = self.ask(json.dumps({**fields, "nonce": nonce}).encode() + b"\n", wait_s)
        prefix = f"{self.tag} {nonce} ".encode()
        if line is None or not line.startswith(prefix):
            self.close()
            return None
        try:
            return json.loads(line[len(prefix):])
        except ValueError:
            self.close()
            return None
