"""Warm Checkstyle and PMD: one JVM per executor thread runs the tool on every Java sample.

Checkstyle's and PMD's command lines spend almost all of a sample's time starting a JVM and
loading, verifying and warming up their own classes (about 0.6 s and 2.5 s a sample). A JVM that
stays up analyses the same file in tens of milliseconds once warm. So each executor thread keeps
one server (``javatoolserver.java``, run by the JDK's source launcher with the tool's classpath)
in a sandbox session of its own, and each sample sends its source; the server runs the tool's own
command-line entry point with the same arguments in a folder of its own, without ending the JVM
(PMD's ``mainWithoutExit``; Checkstyle's ``Main.main`` less its ``System.exit``), and answers
the exit status, what the tool printed and its report. Neither tool runs the code it analyses.

The harness checks every answer (its request's nonce, well-formed fields, a report of at most
:data:`MAX_REPORT_BYTES`). A server that does not answer in time, dies, or answers anything else
is closed with its sandbox and that sample is analysed by the command line; the next sample gets
a new server.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from dataclasses import dataclass
from importlib import resources

from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import SERVER_CPU_S, WarmServer

SOURCE = resources.files("benchwright.criteria").joinpath("javatoolserver.java").read_bytes()
SOURCE_FILE = "BwTool.java"
START_WAIT_S = 120.0
"""How long the server may take to start (the source launcher compiles it first)."""
SERVER_HEAP_MB = 1024
SERVER_PROCESSES = 256
"""RLIMIT_NPROC counts threads: a JVM starts a few dozen."""
MAX_REPORT_BYTES = 16 * 1024 * 1024
REPORT = "{report}"
"""Where the report's path goes in the tool's arguments."""
FILE = "{file}"
"""Where the solution's path goes in the tool's arguments."""
FOLDER = "{dir}"
"""Where the request's folder goes in the tool's arguments."""
ARGUMENT = "{arg}"
"""Where the request's own argument goes in the tool's arguments."""


@dataclass(frozen=True)
class ToolRun:
    """What one run of the tool left: as its command line would."""

    exit_code: int
    printed: str
    """Its standard output and error."""
    report: bytes | None
    """The report file, if it wrote one."""


class JavaToolServer(WarmServer):
    """One warm Checkstyle or PMD in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, java: str, jvm_flags: list[str], classpath: str, tool: str,
                 arguments: list[str], files: dict[str, bytes], wait_s: float, what: str) -> None:
        super().__init__(sandbox, [java, *jvm_flags, f"-Xmx{SERVER_HEAP_MB}m", "-cp", classpath,
                                   SOURCE_FILE, tool, *arguments],
                         {SOURCE_FILE: SOURCE, **files}, ready=b"BWT ready", what=f"{what} (as a warm tool)",
                         start_wait_s=START_WAIT_S,
                         limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                              file_size_mb=64, processes=SERVER_PROCESSES))
        self.wait_s = wait_s

    def analyse(self, name: str, code: str) -> ToolRun | None:
        """The tool's run on ``code`` in a file called ``name``; None when the server failed on
        it (it is closed: the caller runs the command line) or cannot start."""
        return self.run({name: code.encode()})

    def run(self, files: dict[str, bytes], argument: str = "-") -> ToolRun | None:
        """The tool's run with ``files`` (relative names; the first is ``{file}``) in a folder
        of their own and ``argument`` as ``{arg}``; None as for :meth:`analyse`."""
        nonce = secrets.token_hex(16)
        request = f"{nonce} {_b64(argument.encode())}" + "".join(
            f" {_b64(name.encode())}:{_b64(data)}" for name, data in files.items()) + "\n"
        line = self.ask(request.encode("ascii"), self.wait_s)
        answer = _parse(line, nonce) if line is not None else None
        if answer is None:
            self.close()
        return answer


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse(line: bytes, nonce: str) -> ToolRun | None:
    """The server's answer, or None when it is not a well-formed answer to this request (or
    the tool itself failed: exit -1)."""
    parts = line.split(b" ")
    if len(parts) != 5 or parts[0] != b"BWT" or parts[1] != nonce.encode():
        return None
    try:
        exit_code = int(parts[2])
        printed = base64.b64decode(parts[3], validate=True).decode("utf-8", "replace")
        report = None if parts[4] == b"-" else base64.b64decode(parts[4], validate=True)
    except (ValueError, binascii.Error):
        return None
    if not 0 <= exit_code <= 255 or (report is not None and len(report) > MAX_REPORT_BYTES):
        return None
    return ToolRun(exit_code, printed, report)
