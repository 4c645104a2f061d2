"""Java: compile the solution and a generated test class, run every test on a worker thread.

How one sample runs
-------------------
A sample has two sources:

* ``<Public>.java`` -- the solution, verbatim (named after its public top-level type, else
  ``Solution.java``; a ``package`` line is commented out in place, so line numbers stay).
* ``BwTests.java`` -- ``import java.util.*;``, the prelude's import lines, then
  ``public class BwTests`` with the prelude's other lines as members, one
  ``static void test_<i>_<name>() throws Throwable`` per test case (its statements verbatim,
  indented) and ``__bwRun(i)``, which calls test ``i``. :mod:`benchwright.lang.javasource` scans
  the solution and generates this file.

The runner is a class of its own, ``bwrunner.Runner`` (the resource ``javarunner.java`` next to
this module, the same for every sample; in a package, so no class of a solution, all in the
unnamed package, can take its names). It finds the test class by name.

The sources compile in this thread's warm javac server (:mod:`.javacserver`: a long-lived JVM in
a sandbox of its own that runs nothing it compiles; a repeated sample is answered from the cache
of earlier compiles), which also compiled the runner once. javac's exit status and messages are the build's verdict.

The tests then run in one of two JVMs, with the same runner, flags and results:

* **This thread's warm test JVM** (:mod:`.javatestserver`), when the sample's class files -- the
  solution's and the test class's -- name nothing beyond themselves but the JDK's pure classes
  (:mod:`.javagate`: no threads, reflection, files, ``System.exit``, JDK settings, parallel
  streams, finalizers or the JVM's shared random numbers). The runner defines them in a class
  loader of its own, with ``System.out``/``err`` streams of its own, and runs the tests exactly as
  below. A stack overflow or an ``OutOfMemoryError`` anywhere, caught or not, ends that JVM at
  once (either can leave a JDK class unusable for every later sample) and the sample runs in a
  JVM of its own; after a test that outlives its limit, or a sample that leaves the JVM more than
  16 MB larger than before its first sample, the JVM ends after its answer. The next sample
  starts another.
* **A JVM of the sample's own**: one sandbox call runs ``java ... bwrunner.Runner`` on the class
  files. Every sample the gate refuses, and every sample where the warm JVM fails (it hung, died
  or answered something the harness refuses), goes this way.

``ExecutionResult.extra["test_jvm"]`` says which (``warm`` or ``own``); a test holds both side by
side, sample after sample through one warm JVM.

Where the sandbox offers no long-lived sessions, or the server fails on a sample (it hung, died
or answered something the harness refuses), the sample takes the per-sample path instead: one
sandbox call runs ``sh -c 'javac ... || <write marker>; exec java ... bwrunner.Runner ...'``,
compiling the runner with the sample. A failed ``javac`` there leaves ``bw_build_failed`` and its
output in ``bw_javac.txt``: a build error (the model's fault, whether the solution or a test that
calls a missing method broke the build), taken only when the runner never said ``begin`` (a
solution could write those files too). Both paths give the same outcomes (a test holds them side
by side); ``ExecutionResult.extra["compiler"]`` says which one ran (``javac server``, ``cached``
or ``per-sample javac``) and ``compile_wall_ms`` what the server's compile took.

The runner's ``main`` first reads a nonce from stdin (before the test class, whose static
members the prelude may initialise with the solution's code, is even loaded), then replaces
``System.out``/``System.err`` with streams that capture each test's output, then for each test
writes a ``start`` line, runs the test method on a worker thread (``ExecutorService`` +
``Future.get`` with that test's own time limit: its ``TestSpec.timeout_s``, else the call's
``test_timeout_s``) and writes one JSON line ``BWR <nonce> {json}`` (escaped by hand, ASCII
only) to the JVM's own stdout: status (``pass``; ``fail`` for an ``AssertionError``; ``error``
for any other throwable), time (``System.nanoTime`` around the call), exception class/message,
and the line numbers of the stack frames in the test class. Only lines with the nonce count, and
the first line on a test counts: what a solution writes to stdout (``FileDescriptor.out``),
to files or through ``/proc`` has no nonce. The nonce and the stream live in ``main``'s locals
and in an object only it and the exit hook hold: no static field of any class holds them, no
method a solution can call writes with them, and ``-XX:+DisableAttachMechanism`` keeps agents
out of the JVM. (A solution written against this runner could still find the nonce in its own
JVM's memory, through ``/proc/self/mem``: the tests run in the solution's process, as in
every language whose tests do; see docs/security.md.) A test that outlives its timeout is
reported ``timeout`` (with where it was stuck), every later test ``not_run`` -- a Java thread
cannot be stopped safely -- and the JVM halts. ``System.exit`` in the solution runs a shutdown
hook that records an ``exit`` line; a test that started but has no result is ``error`` (the JVM
exited or crashed) or ``timeout`` (the sandbox's wall limit struck), and tests that never
started are ``not_run`` or ``timeout`` respectively. No result never counts as a pass.

Before it halts (after the last test, after a timeout, or in the ``System.exit`` hook) the runner
writes a ``usage`` line, which goes into ``ExecutionResult.extra``: ``cpu_ms``, the CPU time of
the worker thread (it runs the tests and nothing else, so this is the sum over the tests, without
javac, JVM start-up, JIT or GC threads, nor threads a test starts; the kernel's count for that
thread, ``/proc/self/task/<tid>/schedstat``, the figure ``ThreadMXBean.getThreadCpuTime`` gives
without the ~35 ms its classes take to load, which it falls back to where the kernel has none),
and ``max_rss_bytes``, the JVM's peak resident memory (``VmHWM`` in ``/proc/self/status``; in the
warm JVM, its peak since the sample began: the kernel's high-water mark is reset before each
sample, so it counts what the JVM holds then -- within 16 MB of what it held before its first
sample, or it is replaced -- and what the sample adds; where the reset is refused, the JVM serves
one sample). The
sandbox's own figures cover javac as well on the per-sample path, the test JVM alone on the
server's. ``Runtime.halt`` or a crash leaves no usage line, and no such keys.

Lines in a ``TestOutcome`` refer to its ``code``: the solution, then an excerpt of
``BwTests.java`` with the header (imports, prelude) and that test's method. Frames of the test
class are mapped from the generated file's line numbers to that excerpt.

Limits
------
The JVM gets ``memory_mb=0`` in the sandbox (an address-space limit breaks it) and
``-Xmx<limits.memory_mb>m`` instead. The sandbox's wall limit for the whole sample is
``max(limits.wall_s, COMPILE_ALLOWANCE_S + JVM_START_ALLOWANCE_S + the sum of the tests' limits)``:
each test is stopped by the runner after its own limit; the wall limit is only the backstop
(a run's ``limits.sample_timeout_s`` caps it, through the sandbox the engine passes).
The CPU limit is ``limits.cpu_s`` when set, else twice that wall limit (the JVM's own threads).
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import shutil
import subprocess
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec, TestStatus
from benchwright.lang.javacserver import CompileCache, Compiled, JavacServer
from benchwright.lang.javagate import refusal
from benchwright.lang.javasource import (
    RUNNER_CLASS,
    RUNNER_FILE,
    RUNNER_SOURCE,
    TestClassLayout,
    blank_java,
    build_test_class,
    entry_point,
    free_class_name,
    neutralize_package,
    solution_file_name,
    split_prelude,
    top_level_types,
)
from benchwright.lang.javatestserver import JavaTestServer
from benchwright.lang.mutate import Mutant, brace_mutants, find_body
from benchwright.lang.protocol import parse_lines
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits
from benchwright.sandbox.servers import ThreadServers

__all__ = [
    "JavaLanguage",
    "blank_java",
    "solution_file_name",
    "split_prelude",
    "timeouts_of",
    "top_level_types",
    "wall_limit_s",
]

COMPILE_ALLOWANCE_S = 30.0
"""Wall seconds allowed for ``javac`` (it takes about half a second on a small sample)."""
JVM_START_ALLOWANCE_S = 5.0
"""Wall seconds allowed for starting and stopping the test JVM."""
DEFAULT_HEAP_MB = 1024
"""``-Xmx`` when the limits set no memory."""
MIN_THREADS = 256
"""RLIMIT_NPROC counts threads; a JVM alone starts a few dozen."""
TEST_STACK = "64m"
"""``-Xss``: deep recursion is common in solutions; only the touched part is ever committed."""
OUTPUT_CAP_BYTES = 4096
"""Output captured per test case (all of it still goes to the process's stdout/stderr)."""

INSTALL_HINT = "install a JDK, e.g. `apt-get install default-jdk-headless`"

MESSAGE_BYTES = 16 * 1024
"""Room on stdout for one result line besides its output (message, exception, frames)."""
JAVAC_LOG = "bw_javac.txt"
BUILD_FAILED = "bw_build_failed"
OUT_DIR = "out"

JAVAC_ERROR = re.compile(r"(?m)^(?P<file>[^\s:][^:\n]*\.java):(?P<line>\d+): error:")

def javac_flags() -> list[str]:
    """:data:`JAVAC_FLAGS`, after the class-data sharing archive of javac's classes when
    ``./scripts/setup`` made one (see :func:`benchwright.toolbox.javac_archive`)."""
    from benchwright.toolbox import javac_archive

    archive = javac_archive()
    return ([f"-J-XX:SharedArchiveFile={archive}"] if archive is not None else []) + list(JAVAC_FLAGS)


JAVAC_FLAGS = (
    "-J-XX:TieredStopAtLevel=1",
    "-J-XX:+UseSerialGC",
    "-J-XX:-UsePerfData",
    "-d",
    OUT_DIR,
    "-encoding",
    "UTF-8",
    "-proc:none",
    "-implicit:none",
    "-nowarn",
    "-Xlint:none",
    "-Xmaxerrs",
    "50",
    # plain StringBuilder code for `+` on strings: no invokedynamic bootstrap (~30 ms) at run time
    "-XDstringConcat=inline",
)


def java_flags(heap_mb: int) -> tuple[str, ...]:
    return (
        "-ea",
        f"-Xss{TEST_STACK}",
        f"-Xmx{heap_mb}m",
        "-XX:ReservedCodeCacheSize=64m",
        "-XX:CompressedClassSpaceSize=64m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData",
        "-XX:+DisableAttachMechanism",  # no agent loaded into the JVM from another process
        "-Dfile.encoding=UTF-8",
    )


WARM_JVM_FLAGS = (
    # a stack overflow or an OutOfMemoryError anywhere, caught or not, ends the warm JVM at once
    # (the sample then runs in a JVM of its own): either can leave a JDK class whose static
    # initialiser it interrupted unusable for every later sample
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:AbortVMOnException=java.lang.StackOverflowError",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-CreateCoredumpOnCrash",
    "-XX:ErrorFile=/dev/null",
    "-XX:+DisplayVMOutputToStderr",  # the VM's own messages never on the answer channel
)
"""What the warm test JVM runs with beyond a sample's own JVM's flags."""


# --------------------------------------------------------------------------- the language


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise InfraError(
            f"`{name}` is not on PATH: benchwright needs a JDK to run Java ({INSTALL_HINT})"
        )
    return path


@lru_cache(maxsize=8)
def _javac_version(javac: str) -> str:
    try:
        done = subprocess.run(
            [javac, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"`{javac} -version` failed: {e} ({INSTALL_HINT})") from e
    text = (done.stdout.strip() or done.stderr.strip()).splitlines()
    if done.returncode != 0 or not text:
        raise InfraError(f"`{javac} -version` failed (exit {done.returncode}) ({INSTALL_HINT})")
    return text[-1].strip()


def wall_limit_s(
    limits: SandboxLimits, timeouts: float | Sequence[float], n_tests: int = 1
) -> float:
    """The sandbox's wall limit for compiling and running the tests (see module doc):
    ``timeouts`` is every test's limit, or one limit shared by ``n_tests`` tests."""
    total = timeouts * n_tests if isinstance(timeouts, int | float) else sum(timeouts)
    return max(limits.wall_s, COMPILE_ALLOWANCE_S + JVM_START_ALLOWANCE_S + total)


def timeouts_of(tests: Sequence[TestSpec], test_timeout_s: float) -> list[float]:
    """Each test's limit in seconds: its own ``timeout_s``, else ``test_timeout_s``."""
    return [t.timeout_s if t.timeout_s is not None else test_timeout_s for t in tests]


class JavaLanguage(Language):
    """Java 11+ with a JDK's ``javac`` and ``java`` on PATH."""

    name = "java"
    fence_names = ("java",)
    file_extension = ".java"

    def infer_entry_point(self, code: str) -> str | None:
        return entry_point(code)

    scaffolding = (
        (r"@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Test|BeforeEach|Before|ParameterizedTest)\b",
         "a JUnit annotation (a test case is the statements of a method the runner calls; no JUnit "
         "runs: write the asserts themselves)"),
    )

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The entry method's body starts with ``if (true) return <zero>;`` or ``if (true) throw
        new RuntimeException(...);`` (``if (true)`` keeps the rest of the body reachable)."""
        signature = (rf"^[ \t]*(?P<before>(?:@\w+[ \t]+)*(?:[\w<>\[\],.?]+[ \t]+)+)"
                     rf"{re.escape(entry_point)}[ \t]*\(")
        body = find_body(solution, signature)
        if body is None:
            return []
        modifiers = {"public", "private", "protected", "static", "final", "synchronized", "abstract",
                     "native", "strictfp", "default"}
        words = [w for w in re.sub(r"^(?:@\w+\s+)*", "", body.before).split()
                 if w not in modifiers and not w.startswith("<")]
        returns = " ".join(words)
        statements = [("throws", 'if (true) throw new RuntimeException("benchwright mutant");')]
        zero = {"void": "return;", "boolean": "return false;"}.get(returns)
        if zero is None and returns in ("int", "long", "short", "byte", "char", "float", "double"):
            zero = f"return ({returns}) 0;"
        if zero is None and returns and returns not in ("new", "return", "else"):
            zero = "return null;"
        if zero is not None:
            statements.insert(0, (f"does `{zero}`", f"if (true) {zero}"))
        return brace_mutants(solution, signature, statements)

    install_hint = "apt-get install default-jdk-headless"

    def toolchain(self) -> dict[str, str]:
        return {"javac": _javac_version(_tool("javac"))}

    def missing(self) -> str | None:
        absent = [t for t in ("javac", "java") if shutil.which(t) is None]
        if absent:
            return f"{' and '.join(absent)} not on PATH ({INSTALL_HINT})"
        return None

    def __init__(self, compile_server: bool = True, test_server: bool = True) -> None:
        self.compile_server = compile_server
        """Compile through a warm javac per executor thread (see :mod:`.javacserver`) where the
        sandbox offers long-lived sessions; False: a fresh ``javac`` per sample, in the
        sandbox call that runs its tests."""
        self.test_server = test_server
        """Run the tests of a sample that :func:`~benchwright.lang.javagate.refusal` lets through
        in a warm test JVM per executor thread (see :mod:`.javatestserver`; only with the warm
        javac); False: every sample's tests in a JVM of its own."""
        self._testers: dict[int, ThreadServers[JavaTestServer]] = {}
        """The warm test JVMs, by heap size (``-Xmx``: a sample's memory limit)."""
        self._testers_lock = threading.Lock()
        self._javacs: ThreadServers[JavacServer] = ThreadServers(self._javac)
        self._runner: dict[str, bytes] | None = None
        """The runner's class files (``bwrunner/Runner.class``...), once a server compiled them."""
        self._runner_lock = threading.Lock()
        self._cache = CompileCache()

    def close(self) -> None:
        self._javacs.close()
        with self._testers_lock:
            testers = list(self._testers.values())
        for tester in testers:
            tester.close()

    def _tester(self, sandbox: Sandbox, heap_mb: int, processes: int) -> JavaTestServer | None:
        """This thread's warm test JVM with ``-Xmx<heap_mb>m`` (made on first use)."""
        runner = self._runner
        if runner is None:
            return None
        with self._testers_lock:
            servers = self._testers.get(heap_mb)
            if servers is None:
                def make(box: Sandbox) -> JavaTestServer:
                    return JavaTestServer(box, _tool("java"), [*java_flags(heap_mb), *WARM_JVM_FLAGS], runner,
                                          RUNNER_CLASS, heap_mb, processes)
                servers = self._testers[heap_mb] = ThreadServers(make)
        return servers.get(sandbox)

    def _run_warm(self, sandbox: Sandbox, compiled: Compiled, timeouts_ms: str, cap: int,
                  class_name: str, n_tests: int, wall_s: float, heap_mb: int, processes: int,
                  nonce: str) -> ProcessResult | None:
        """The sample's tests in this thread's warm test JVM, as a JVM of its own would have
        written their results; None: run them in a JVM of their own (the sample reaches beyond
        its classes, or there is no warm JVM here, or it failed on this sample)."""
        if not self.test_server or refusal(compiled.classes) is not None:
            return None
        server = self._tester(sandbox, heap_mb, processes)
        if server is None:
            return None
        classes = {name.removesuffix(".class").replace("/", "."): data for name, data in compiled.classes.items()}
        run = server.run(nonce, timeouts_ms, cap, class_name, n_tests, classes, wall_s)
        if run is None:
            return None
        usage = next((r for r in parse_lines(run.lines, f"BWR {nonce} ") if r.get("ev") == "usage"), {})
        cpu, rss = usage.get("cpu_ms"), usage.get("max_rss_bytes")
        return ProcessResult(exit_code=0, signal=None, stdout=run.lines, stderr=b"", timed_out=False,
                             wall_ms=run.wall_ms,
                             cpu_ms=float(cpu) if isinstance(cpu, int | float) and not isinstance(cpu, bool) else 0.0,
                             max_rss_bytes=rss if isinstance(rss, int) and not isinstance(rss, bool) else 0)

    @staticmethod
    def _javac(sandbox: Sandbox) -> JavacServer:
        flags = [f for f in JAVAC_FLAGS if not f.startswith("-J")]
        at = flags.index("-d")
        del flags[at:at + 2]  # the server gives each job its own output folder
        jvm = [f[2:] for f in javac_flags() if f.startswith("-J") and "TieredStopAtLevel" not in f]
        jvm.append("-XX:TieredStopAtLevel=1")  # C1 alone: warm within tens of compiles, half the CPU
        return JavacServer(sandbox, _tool("java"), flags, jvm)

    def run_tests(
        self,
        sandbox: Sandbox,
        solution: str,
        tests: list[TestSpec],
        *,
        prelude: str | None,
        limits: SandboxLimits,
        test_timeout_s: float,
    ) -> ExecutionResult:
        javac, java = _tool("javac"), _tool("java")
        source = neutralize_package(solution)
        if not source.endswith("\n"):
            source += "\n"
        solution_file = solution_file_name(source)
        class_name = free_class_name(source)
        layout = build_test_class(class_name, tests, prelude)
        test_file = f"{class_name}.java"

        timeouts = timeouts_of(tests, test_timeout_s)
        wall = wall_limit_s(limits, timeouts)
        heap = limits.memory_mb if limits.memory_mb > 0 else DEFAULT_HEAP_MB
        timeouts_ms = ",".join(str(max(1, round(t * 1000))) for t in timeouts) or "1"
        cap = max(256, min(OUTPUT_CAP_BYTES, limits.output_bytes * 8 // max(1, len(tests))))
        compile_cmd = shlex.join([javac, *javac_flags(), RUNNER_FILE, solution_file, test_file])
        run_cmd = shlex.join([java, *java_flags(heap), "-cp", OUT_DIR, RUNNER_CLASS, timeouts_ms,
                              str(cap), class_name, str(len(tests))])
        sources = {solution_file: source.encode(), test_file: layout.source.encode()}
        compiled, runner = self._compile(sandbox, sources)
        if compiled is None or runner is None:
            compiled = None
            files = {RUNNER_FILE: RUNNER_SOURCE.encode(), **sources}
            script = (f"{compile_cmd} </dev/null >{JAVAC_LOG} 2>&1 || {{ echo $? >{BUILD_FAILED}; "
                      f"exit 0; }}\nexec {run_cmd}\n")
        else:  # the runner's classes in their package folder, the sample's beside it
            files = {f"{OUT_DIR}/{name}": data for name, data in {**compiled.classes, **runner}.items()}
            script = f"exec {run_cmd}\n"
        sandbox_limits = SandboxLimits(
            wall_s=wall,
            cpu_s=limits.cpu_s if limits.cpu_s is not None else 2 * wall,
            memory_mb=0,
            # the result lines come on stdout: room for every test's (and what a solution adds)
            output_bytes=max(limits.output_bytes,
                             64 * 1024 + len(tests) * (6 * cap + MESSAGE_BYTES)),
            file_size_mb=limits.file_size_mb,
            processes=max(limits.processes, MIN_THREADS),
        )
        nonce = secrets.token_hex(16)
        warm: ProcessResult | None = None
        if compiled is not None and compiled.exit_code == 0:
            warm = self._run_warm(sandbox, compiled, timeouts_ms, cap, class_name, len(tests), wall, heap,
                                  sandbox_limits.processes, nonce)
        if compiled is not None and compiled.exit_code != 0:  # nothing to run: javac's verdict
            proc = ProcessResult(exit_code=0, signal=None, stdout=b"", stderr=b"", timed_out=False,
                                 wall_ms=compiled.wall_ms, cpu_ms=0.0, max_rss_bytes=0,
                                 files={JAVAC_LOG: compiled.messages.encode(), BUILD_FAILED: b"1\n"})
        elif warm is not None:
            proc = warm
        else:
            proc = sandbox.run(
                ["/bin/sh", "-c", script],
                files=files,
                limits=sandbox_limits,
                stdin=nonce.encode() + b"\n",
                collect=(JAVAC_LOG, BUILD_FAILED) if compiled is None else (),
            )
        collector = _Collector(source, layout, tests, proc, test_file, solution_file, wall, timeouts, nonce)
        collector.extra["compiler"] = ("per-sample javac" if compiled is None else
                                       "cached" if compiled.cached else "javac server")
        # where the tests ran: this thread's warm test JVM, or a JVM of the sample's own
        collector.extra["test_jvm"] = "warm" if warm is not None else "own"
        if compiled is not None:
            collector.extra["compile_wall_ms"] = round(compiled.wall_ms, 1)
        return collector.result()

    def compile_warm(self, sandbox: Sandbox, sources: dict[str, bytes]) -> Compiled | None:
        """``sources`` (a solution and its test class) compiled as :meth:`run_tests` compiles
        them, in this thread's javac server or from the cache of compiles; None when there is
        no server here or it failed on them (the caller compiles the old way)."""
        compiled, _runner = self._compile(sandbox, sources)
        return compiled

    def _compile(self, sandbox: Sandbox,
                 sources: dict[str, bytes]) -> tuple[Compiled | None, dict[str, bytes] | None]:
        """The sample compiled in this thread's javac server, and the runner's class files
        (compiled once, by the first server, before any sample); (None, None): compile the
        old way (no server here, or it failed on this sample)."""
        if not self.compile_server:
            return None, None
        server = self._javacs.get(sandbox)
        if server is None:
            return None, None
        with self._runner_lock:
            if self._runner is None:
                built = server.compile({RUNNER_FILE: RUNNER_SOURCE.encode()}, packages=True)
                if built is None or built.exit_code != 0:
                    return None, None
                self._runner = built.classes
        key = self._cache.key(server.argv, sources)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = server.compile(sources)
            if compiled is not None:
                self._cache.put(key, compiled)
        return compiled, self._runner


# --------------------------------------------------------------------------- reading the results


class _Collector:
    """Turns the sandbox's result into one outcome per test."""

    def __init__(
        self,
        source: str,
        layout: TestClassLayout,
        tests: list[TestSpec],
        proc: ProcessResult,
        test_file: str,
        solution_file: str,
        wall_s: float,
        timeouts: list[float],
        nonce: str,
    ) -> None:
        self.nonce = nonce
        self.layout = layout
        self.tests = tests
        self.proc = proc
        self.test_file = test_file
        self.solution_file = solution_file
        self.wall_s = wall_s
        self.timeouts = timeouts
        self.timeout_culprit: int | None = None
        prefix = source + "\n" + f"// ---- {test_file} (this test case's part) ----\n"
        self.offset = prefix.count("\n")
        """Reported line = offset + line within the test class excerpt."""
        header = "\n".join(layout.header) + "\n"
        self.codes = [prefix + header + "\n".join(method) + "\n}\n" for _, method in layout.methods]
        self.extra: dict[str, object] = {
            "solution_file": solution_file,
            "test_class": layout.class_name,
            "wall_limit_s": wall_s,
        }

    # ---- line mapping

    def map_line(self, index: int, file_line: int) -> int | None:
        """A line of the generated test class -> the line in test ``index``'s reported code."""
        header_len = len(self.layout.header)
        if 1 <= file_line <= header_len:
            return self.offset + file_line
        first, method = self.layout.methods[index]
        if first <= file_line < first + len(method):
            return self.offset + header_len + file_line - first + 1
        return None

    def _frame_line(self, index: int, lines: list[Any]) -> int | None:
        """The innermost frame inside test ``index``'s method."""
        first, method = self.layout.methods[index]
        for line in lines:
            if isinstance(line, int) and first <= line < first + len(method):
                return self.map_line(index, line)
        return None

    def _source_line(self, index: int, line: int | None) -> str:
        if line is None:
            return ""
        lines = self.codes[index].splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    # ---- outcomes

    def result(self) -> ExecutionResult:
        files = self.proc.files
        records, events = self._parse(self.proc.stdout)
        if BUILD_FAILED in files and "begin" not in events:  # the JVM never started
            return self._build_failure(files.get(JAVAC_LOG, b"").decode("utf-8", "replace"))
        if "begin" not in events and not self.proc.timed_out:
            return self._infra(
                f"the test JVM did not start (it {_death(self.proc)}): "
                + _tail(self.proc.stderr.decode("utf-8", "replace"))
            )
        timed_out = [i for i, r in records.items() if r.get("status") == "timeout"]
        self.timeout_culprit = min(timed_out) if timed_out else None
        outcomes = [self._outcome(i, records.get(i), events) for i in range(len(self.tests))]
        self._usage(events.get("usage"))
        return ExecutionResult(tests=outcomes, process=self.proc, extra=self.extra)

    def _usage(self, usage: object) -> None:
        """``cpu_ms`` (the tests' thread CPU time) and ``max_rss_bytes`` (the JVM's peak RSS)
        into ``extra``, when the runner got as far as measuring them."""
        if not isinstance(usage, dict):
            return
        cpu = usage.get("cpu_ms")
        if isinstance(cpu, int | float) and not isinstance(cpu, bool) and cpu >= 0:
            self.extra["cpu_ms"] = float(cpu)
        rss = usage.get("max_rss_bytes")
        if isinstance(rss, int) and not isinstance(rss, bool) and rss > 0:
            self.extra["max_rss_bytes"] = rss

    def _parse(self, data: bytes) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
        """The runner's records and events: lines of the JVM's stdout that carry the nonce
        (a line without it -- whatever a solution writes there -- is not the runner's); the
        first word on a test or an event counts."""
        records: dict[int, dict[str, Any]] = {}
        events: dict[str, Any] = {"started": set()}
        prefix = f"BWR {self.nonce} "
        for raw in data.decode("ascii", "replace").splitlines():
            if not raw.startswith(prefix):
                continue
            try:
                rec = json.loads(raw[len(prefix):])
            except ValueError:
                continue  # a line cut short by the output cap
            if not isinstance(rec, dict):
                continue
            ev = rec.get("ev")
            if ev == "start" and isinstance(rec.get("i"), int):
                events["started"].add(rec["i"])
            elif ev is not None:
                events.setdefault(str(ev), rec)
            elif isinstance(rec.get("i"), int) and isinstance(rec.get("status"), str):
                records.setdefault(rec["i"], rec)
        return records, events

    def _outcome(self, i: int, rec: dict[str, Any] | None, events: dict[str, Any]) -> TestOutcome:
        test = self.tests[i]
        code = self.codes[i]
        if rec is None:
            return self._missing(i, events)
        status: str = rec["status"]
        ms = rec.get("ms")
        time_ms = float(ms) if isinstance(ms, int | float) else None
        output = _text(rec.get("out"))
        raw_lines = rec.get("lines")
        lines: list[Any] = raw_lines if isinstance(raw_lines, list) else []
        line = self._frame_line(i, lines) if status != "pass" else None
        message: str | None = None
        final: TestStatus
        if status == "pass":
            final = "pass"
        elif status == "fail":
            final = "fail"
            message = _text(rec.get("msg")) or None
            if message is None:
                where = self._source_line(i, line)
                message = f"assertion failed: {where}" if where else "assertion failed"
        elif status == "error":
            final = "error"
            message = _text(rec.get("text")) or _text(rec.get("exc")) or "error"
        elif status == "timeout":
            final = "timeout"
            message = f"timed out after {self.timeouts[i]:g} s"
        else:
            final = "not_run"
            culprit = self.timeout_culprit
            message = (
                f"not run: test {self.tests[culprit].name!r} timed out and a Java thread "
                "cannot be stopped safely"
                if culprit is not None
                else "not run"
            )
        return TestOutcome(test.name, final, message, line, code, time_ms, output)

    def _missing(self, i: int, events: dict[str, Any]) -> TestOutcome:
        test = self.tests[i]
        code = self.codes[i]
        started: set[int] = events["started"]
        last_started = max(started) if started else None
        if self.proc.timed_out:
            return TestOutcome(
                test.name,
                "timeout",
                "the sample exceeded its wall limit (stopped after "
                f"{self.proc.wall_ms / 1000:.1f} s of compiling and running the tests); "
                "this test has no result",
                None,
                code,
                None,
            )
        how = _death(self.proc)
        if i == last_started:
            exit_ev = events.get("exit")
            output = _text(exit_ev.get("out")) if isinstance(exit_ev, dict) else ""
            detail = _tail(self.proc.stderr.decode("utf-8", "replace"))
            message = f"the JVM {how} while this test ran (System.exit, Runtime.halt or a crash)"
            if detail:
                message += f": {detail}"
            return TestOutcome(test.name, "error", message, None, code, None, output)
        culprit = self.tests[last_started].name if last_started is not None else None
        message = (
            f"not run: the JVM {how} during test {culprit!r}"
            if culprit is not None
            else f"not run: the JVM {how} before any test ran"
        )
        return TestOutcome(test.name, "not_run", message, None, code, None)

    def _build_failure(self, log: str) -> ExecutionResult:
        log = log.strip()
        errors = [(m.group("file"), int(m.group("line"))) for m in JAVAC_ERROR.finditer(log)]
        if not errors:
            # javac itself failed (it could not start, or a flag is wrong): not the model's fault
            return self._infra(f"javac failed without a compile error: {_tail(log)}")
        message = log if len(log) <= 16000 else log[:16000] + "\n..."
        outcomes: list[TestOutcome] = []
        for i, test in enumerate(self.tests):
            line: int | None = None
            for file, file_line in errors:
                if file.endswith(self.solution_file):
                    line = file_line
                elif file.endswith(self.test_file):
                    line = self.map_line(i, file_line)
                if line is not None:
                    break
            outcomes.append(TestOutcome(test.name, "error", message, line, self.codes[i], None))
        return ExecutionResult(
            tests=outcomes, process=self.proc, build_error=message, extra=self.extra
        )

    def _infra(self, message: str) -> ExecutionResult:
        outcomes = [
            TestOutcome(t.name, "not_run", f"not run: {message}", None, self.codes[i], None)
            for i, t in enumerate(self.tests)
        ]
        return ExecutionResult(
            tests=outcomes, process=self.proc, infra_error=message, extra=self.extra
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _tail(text: str, limit: int = 800) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _death(proc: ProcessResult) -> str:
    if proc.signal is not None:
        names = {
            9: "SIGKILL",
            24: "SIGXCPU (CPU limit)",
            25: "SIGXFSZ (file size limit)",
            6: "SIGABRT",
        }
        return f"was killed by signal {proc.signal}" + (
            f" ({names[proc.signal]})" if proc.signal in names else ""
        )
    return f"exited with code {proc.exit_code}"
