"""A warm test JVM: one per executor thread runs the tests of sample after sample.

A Java sample's tests used to cost a JVM of their own each (about 85 ms of CPU to start, most of
a sample once javac is warm). This server is the same runner (``javarunner.java``, started with
``--serve``) in a long-lived JVM in a sandbox session of its own, with the same flags, heap and
stack as a sample's own JVM. Each request carries one sample's class files (the solution and its
test class, as the warm javac compiled them) and the runner's arguments; the runner defines them
in a class loader of its own (its parent is the JDK's platform loader: no sample can name the
runner), runs every test exactly as in a JVM of its own (a worker thread, each test's own limit,
the output captured per test, the CPU time of that thread, the peak memory since the request
began) and answers with the result lines that JVM would have written, under the request's nonce.

Only samples that :func:`benchwright.lang.javagate.refusal` lets through come here: their class
files call nothing that outlives them or changes the JVM for the next sample (no threads,
reflection, files, ``System.exit``, JDK settings, the JVM's shared random numbers). The JVM
runs with :data:`~benchwright.lang.java.WARM_JVM_FLAGS`: a stack overflow or an
``OutOfMemoryError``, even one a sample catches, ends it at once (it could have left a JDK class
half-initialised, unusable for every later sample), so that sample runs in a JVM of its own.
After a test that outlives its limit, or a sample that leaves the JVM more than 16 MB larger
than before its first sample (whose memory the next sample's figure would count), the server
answers with ``last`` and halts; the harness closes it on that answer, and the next sample
starts another. Each sample gets ``System.out`` and
``System.err`` streams of its own. A server
that does not answer in time, dies, or answers anything but its request's lines is closed, and
the sample runs in a JVM of its own.
"""

from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass

from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import SERVER_CPU_S, WarmServer

READY = b"BWJ ready"
START_WAIT_S = 60.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most result lines taken from one answer (the sandbox call's own output cap is the per-sample
path's bound: this one is only against a server gone wrong)."""
RUNNER_DIR = "bw_runner"


@dataclass(frozen=True)
class TestRun:
    """What the warm JVM answered for one sample."""

    lines: bytes
    """The result lines (``BWR <nonce> {json}``), as a JVM of the sample's own writes them."""
    wall_ms: float
    """From the request to the answer."""


class JavaTestServer(WarmServer):
    """One warm test JVM in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, java: str, jvm_flags: list[str], runner: dict[str, bytes],
                 runner_class: str, heap_mb: int, processes: int) -> None:
        super().__init__(sandbox, [java, *jvm_flags, "-cp", RUNNER_DIR, runner_class, "--serve"],
                         {f"{RUNNER_DIR}/{name}": data for name, data in runner.items()},
                         ready=READY, what="the warm test JVM", start_wait_s=START_WAIT_S,
                         limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                              file_size_mb=64, processes=processes))
        self.heap_mb = heap_mb
        """The ``-Xmx`` it runs with: a sample with another memory limit needs another server."""

    def run(self, nonce: str, limits_ms: str, cap: int, test_class: str, n_tests: int,
            classes: dict[str, bytes], wait_s: float) -> TestRun | None:
        """Run the tests of the sample whose class files are ``classes`` (binary class name ->
        bytes); None when the server failed on it (it is closed: the caller runs the sample in
        a JVM of its own) or cannot start."""
        parts = [nonce, limits_ms, str(cap), test_class, str(n_tests)]
        parts += [f"{_b64(name.encode())}:{_b64(data)}" for name, data in classes.items()]
        started = time.perf_counter()
        line = self.ask((" ".join(parts) + "\n").encode("ascii"), wait_s)
        wall_ms = (time.perf_counter() - started) * 1000
        parsed = _parse(line, nonce) if line is not None else None
        if parsed is None:
            self.close()
            return None
        answer, last = parsed
        if last:  # the JVM halts after this answer: the next sample starts another
            self.close()
        return TestRun(answer, wall_ms)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse(line: bytes, nonce: str) -> tuple[bytes, bool] | None:
    """The result lines of the answer to the request with ``nonce`` and whether it is the
    server's last (``BWJ <nonce> <base64>[ last]``); None for anything else."""
    parts = line.split(b" ")
    last = len(parts) == 4 and parts[3] == b"last"
    if len(parts) != 3 + last or parts[0] != b"BWJ" or parts[1] != nonce.encode() \
            or len(parts[2]) > MAX_ANSWER_BYTES:
        return None
    try:
        return base64.b64decode(parts[2], validate=True), last
    except (ValueError, binascii.Error):
        return None
