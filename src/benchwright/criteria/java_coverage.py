"""``java-jacoco``: line and branch coverage of a Java solution by its task's tests (JaCoCo).

One sandbox call, three steps (``sh -c``), in the sample's own work folder:

1. ``javac`` compiles the solution and the test class exactly as the Java runner does
   (:func:`benchwright.lang.javasource.build_test_class`, the same flags), with the two helper
   programs next to this module: ``BwCoverageRun.java`` and ``BwCoverageReport.java``. A build
   error in the solution or a test is the model's fault: score 0, with the compiler's message.
2. ``BwCoverageRun`` runs every test case (the test class's ``__bwRun``) under the JaCoCo agent,
   each on a worker thread with its own time limit (the one the runner gives it); a failing,
   crashing or timed-out test does not stop the others, and what it ran counts. The agent
   instruments every class but the test class and the helpers, and its execution data is
   written before the JVM halts. ``System.exit`` in a test ends the run there (the agent still
   writes what ran); ``Runtime.halt`` loses it all (score 0).
3. ``BwCoverageReport`` analyses the class files with ``org.jacoco.core`` and writes, for each
   line of the solution with code, JaCoCo's status (not, partly, fully covered) and its
   branches.

In a run, the steps are spread so that a sample pays only for its tests: the solution and test
class come from the Java language's warm javac (or its cache of compiles), the helper programs are
compiled once, and this criterion's warm JVM (one per executor thread, in a sandbox of its own:
:mod:`.javatoolserver`, which runs nothing it reads) instruments the solution's classes for
JaCoCo's offline runtime (``Instrumenter``: the probes the agent would insert as the classes load)
and later analyses the execution data. The sample's sandbox call then runs only ``BwCoverageRun``
on the instrumented classes with the agent's jar on the class path and no ``-javaagent`` (which
cost about 80 ms a sample to start), starting JaCoCo's runtime before the first test as the agent
would. The analysis reads the original class files, so the figures are the agent's (a test
compares both paths). A class JaCoCo cannot instrument, an answer that is not exactly the classes
sent, or no warm JVM yet (a thread's first samples) leaves the sample to the agent.

The score is ``(covered lines + covered branches) / (lines + branches)``: a line counts as
covered when any of its instructions ran (JaCoCo's line counter), a branch is one outcome of a
condition or ``switch``. The implicit constructor of a class that is never instantiated (every
``Solution`` of static methods has one, on its header line) is left out. ``details`` has the
line and branch ratios apart, the lines not covered and the lines with a branch never taken;
``output`` names them.

JaCoCo 0.8.6 is Debian's ``libjacoco-java``: the agent is ``jacocoagent.jar`` inside
``org.jacoco.agent.jar`` (``org.jacoco.agent.rt.jar`` is its unshaded classes, without the
``Premain-Class`` a ``-javaagent`` needs), copied into the work folder. Debian builds it
against ASM 9.4, which reads the class files of the JDK 17 this runs on, so the solution is
compiled as the runner compiles it (no ``--release``). JaCoCo's own visitors use ASM 8's API,
though: a class with Java 17's ``PermittedSubclasses`` (a ``sealed`` type) cannot be analysed,
and such a sample's record is ``n/a``.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shlex
import shutil
import threading
import zipfile
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from benchwright import toolbox
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.criteria.javatoolserver import ARGUMENT, FOLDER, JavaToolServer
from benchwright.criteria.javatoolserver import REPORT as REPORT_PATH
from benchwright.errors import InfraError
from benchwright.lang.java import (
    BUILD_FAILED,
    DEFAULT_HEAP_MB,
    JAVAC_ERROR,  # the runner's pattern of a javac error line
    JAVAC_LOG,
    MIN_THREADS,
    OUT_DIR,
    JavaLanguage,
    java_flags,  # the runner's JVM flags (stack, heap, GC, JIT)
    javac_flags,
    timeouts_of,
    wall_limit_s,
)
from benchwright.lang.javacserver import Compiled
from benchwright.lang.javasource import (
    blank_java,
    build_test_class,
    free_class_name,
    neutralize_package,
    solution_file_name,
)
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits
from benchwright.sandbox.servers import COLD_USES, ThreadServers
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

__all__ = ["Coverage", "JavaJacoco", "line_ranges", "parse_report"]

AGENT_HOLDER = "org.jacoco.agent.jar"
"""The Debian jar that holds JaCoCo's real agent, ``jacocoagent.jar``."""
ANALYSIS_JARS = ("org.jacoco.core.jar", "asm.jar", "asm-commons.jar", "asm-tree.jar")
"""What ``BwCoverageReport`` needs besides the JDK (org.jacoco.core and the ASM it uses)."""
INSTALL_HINT = "apt-get install libjacoco-java"
AGENT = "bw_jacocoagent.jar"
EXEC_FILE = "bw_jacoco.exec"
RUN_LOG = "bw_coverage_tests.txt"
REPORT = "bw_coverage.txt"
STDERR = "bw_coverage_stderr.txt"
RUN_CLASS = "BwCoverageRun"
REPORT_CLASS = "BwCoverageReport"
INSTRUMENTED_FACTOR = 3.0
"""How much longer than the runner's own wall budget the instrumented run (javac, the test JVM
with the agent) may take: instrumentation slows it, and a busy machine more so; a coverage run
cut short would be an infra_error of the sample, not a fact about the solution."""
CLASS_CAP = 4 * 1024 * 1024
"""The largest instrumented class file taken from the warm JVM (javac writes at most 64 KiB a
method; the probes add a few bytes each)."""
CLASS_MAGIC = b"\xca\xfe\xba\xbe"
EXEC_CAP = 64 * 1024 * 1024
"""The most execution data read back from the test JVM's sandbox (a few KiB is usual)."""
REPORT_ALLOWANCE_S = 30.0
"""Wall seconds added to the runner's budget for analysing the execution data."""
TOOL_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:-UsePerfData")

NOT_COVERED, FULLY_COVERED, PARTLY_COVERED = 1, 2, 3
"""JaCoCo's ``ICounter`` line statuses, as the report writes them."""


def _source(name: str) -> bytes:
    return resources.files("benchwright.criteria").joinpath(name).read_bytes()


@functools.cache
def _agent_jar() -> bytes:
    """``jacocoagent.jar`` from Debian's ``org.jacoco.agent.jar``."""
    try:
        with zipfile.ZipFile(toolbox.java_lib(AGENT_HOLDER)) as holder:
            return holder.read("jacocoagent.jar")
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        raise InfraError(f"cannot read JaCoCo's agent from {toolbox.java_lib(AGENT_HOLDER)}: {e}") from e


HELPERS_SCRIPT = r"""
import base64, json, os, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True)
if proc.returncode != 0:
    sys.exit(proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace"))
found = {}
for folder, _, names in os.walk("bw_helpers"):
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            found[os.path.relpath(path, "bw_helpers")] = base64.b64encode(f.read()).decode()
print(json.dumps(found))
"""
"""Compiles the helper programs in a sandbox and prints their class files (name: base64)."""


def _helper_classes(sandbox: Sandbox) -> dict[str, bytes]:
    """``BwCoverageRun`` and ``BwCoverageReport`` compiled (with the JDK, the agent and JaCoCo's
    analysis jars on the class path), as class file name -> bytes: benchwright's own code, the
    same for every sample.

    Raises:
        InfraError: javac failed on them.
    """
    analysis_cp = ":".join(str(toolbox.java_lib(j)) for j in ANALYSIS_JARS)
    argv = [_program("javac"), *(f for f in javac_flags() if f != OUT_DIR and f != "-d"), "-d", "bw_helpers",
            "-cp", f"{AGENT}:{analysis_cp}", f"{RUN_CLASS}.java", f"{REPORT_CLASS}.java"]
    proc = sandbox.run([sandbox.python, "-I", "-S", "-c", HELPERS_SCRIPT, *argv], files={
        f"{RUN_CLASS}.java": _source(f"{RUN_CLASS}.java"), f"{REPORT_CLASS}.java": _source(f"{REPORT_CLASS}.java"),
        AGENT: _agent_jar()}, limits=SandboxLimits(wall_s=120, memory_mb=0, processes=MIN_THREADS,
                                                 output_bytes=16 * 1024 * 1024))
    try:
        found = json.loads(proc.stdout)
        return {name: base64.b64decode(data) for name, data in found.items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise InfraError(f"javac failed on benchwright's coverage programs: "
                         f"{(proc.stderr or proc.stdout).decode(errors='replace')[-800:]}") from e


def _program(name: str) -> str:
    return shutil.which(name) or f"/usr/bin/{name}"


def line_ranges(lines: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9``."""
    runs: list[list[int]] = []
    for n in sorted(set(lines)):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


class Coverage:
    """The solution's coverage, from the report: per line, JaCoCo's status and branches."""

    def __init__(self, lines: dict[int, tuple[int, int, int]], nomatch: list[str],
                 idle_constructors: list[int]) -> None:
        self.lines = lines
        """line -> (status, missed branches, covered branches)."""
        self.nomatch = nomatch
        self.idle_constructors = idle_constructors
        """Lines of one-line no-argument constructors that never ran."""

    def without_implicit_constructors(self, source: str) -> list[int]:
        """Forget the implicit constructors of classes never instantiated (javac puts them on
        the class's header line); return their lines."""
        text = blank_java(source).splitlines()
        dropped = [n for n in self.idle_constructors
                   if 0 < n <= len(text) and re.search(r"\bclass\b", text[n - 1])
                   and self.lines.get(n) == (NOT_COVERED, 0, 0)]
        for n in dropped:
            del self.lines[n]
        return dropped

    @property
    def covered_lines(self) -> int:
        return sum(s in (FULLY_COVERED, PARTLY_COVERED) for s, _, _ in self.lines.values())

    @property
    def missed_lines(self) -> list[int]:
        return sorted(n for n, (s, _, _) in self.lines.items() if s == NOT_COVERED)

    @property
    def branches(self) -> tuple[int, int]:
        """(covered, total) branches."""
        covered = sum(c for _, _, c in self.lines.values())
        return covered, covered + sum(m for _, m, _ in self.lines.values())

    @property
    def partial_branch_lines(self) -> list[int]:
        """Lines that ran but have a branch never taken."""
        return sorted(n for n, (s, m, _) in self.lines.items() if m > 0 and s != NOT_COVERED)


def parse_report(text: str) -> Coverage:
    """Read ``BwCoverageReport``'s file.

    Raises:
        InfraError: it is cut short or not in the expected form.
    """
    lines: dict[int, tuple[int, int, int]] = {}
    nomatch: list[str] = []
    idle: list[int] = []
    rows = text.splitlines()
    if not rows or rows[-1] != "end":
        raise InfraError(f"JaCoCo's coverage report is incomplete: {text[-300:]!r}")
    for row in rows[:-1]:
        parts = row.split()
        if len(parts) == 5 and parts[0] == "L" and all(p.isdigit() for p in parts[1:]):
            line, status, missed, covered = (int(p) for p in parts[1:])
            lines[line] = (status, missed, covered)
        elif len(parts) == 3 and parts[0] == "C":
            nomatch.append(parts[1])
        elif len(parts) == 2 and parts[0] == "I" and parts[1].isdigit():
            idle.append(int(parts[1]))
        else:
            raise InfraError(f"unexpected line in JaCoCo's coverage report: {row!r}")
    return Coverage(lines, nomatch, idle)


class JavaJacoco(Criterion):
    """Line and branch coverage of the solution by the task's tests, with JaCoCo's agent."""

    name = "java-jacoco"
    unit = "ratio"
    higher_is_better = True
    executes = True
    languages = ("java",)
    tool = "jacoco 0.8.6"

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        """Compile through the Java language's warm javac where it has one (the helper
        programs once); False: ``javac`` in every sample's sandbox call."""
        self._helpers: dict[str, bytes] | None = None
        self._helpers_lock = threading.Lock()
        self._servers: ThreadServers[JavaToolServer] = ThreadServers(self._server, COLD_USES)
        """JaCoCo's instrumentation and analysis in a warm JVM per executor thread (once the
        helpers are compiled)."""
        self.offline_runs = 0
        """How many samples ran their tests on classes the warm JVM instrumented (no agent)."""

    def missing(self) -> str | None:
        for jar in (AGENT_HOLDER, *ANALYSIS_JARS):
            why = toolbox.missing_file(toolbox.java_lib(jar), "JaCoCo", INSTALL_HINT)
            if why is not None:
                return why
        if shutil.which("javac") is None or shutil.which("java") is None:
            return "java-jacoco needs a JDK (javac and java on PATH): apt-get install default-jdk-headless"
        return None

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return language in self.languages and bool(rendered.tests)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        source = neutralize_package(ctx.code)
        if not source.endswith("\n"):
            source += "\n"
        solution_file = solution_file_name(source)
        test_class = free_class_name(source)
        layout = build_test_class(test_class, ctx.rendered.tests, ctx.rendered.prelude)
        timeouts = timeouts_of(ctx.rendered.tests, ctx.test_timeout_s())
        wall = (INSTRUMENTED_FACTOR * wall_limit_s(SandboxLimits(wall_s=ctx.test_timeout_s()), timeouts)
                + REPORT_ALLOWANCE_S)
        heap = ctx.limits.memory_mb if ctx.limits.memory_mb > 0 else DEFAULT_HEAP_MB
        analysis_cp = ":".join(str(toolbox.java_lib(j)) for j in ANALYSIS_JARS)
        javac, java = _program("javac"), _program("java")
        compile_cmd = shlex.join([
            javac, *javac_flags(), "-cp", f"{AGENT}:{analysis_cp}",
            solution_file, f"{test_class}.java", f"{RUN_CLASS}.java", f"{REPORT_CLASS}.java"])
        excludes = ":".join(f"{c}:{c}$*" for c in (test_class, RUN_CLASS, REPORT_CLASS))
        limits_ms = ",".join(str(max(1, round(t * 1000))) for t in timeouts) or "1"
        run_cmd = shlex.join([
            java, *java_flags(heap), f"-javaagent:{AGENT}=destfile={EXEC_FILE},excludes={excludes}",
            "-cp", OUT_DIR, RUN_CLASS, test_class, str(len(timeouts)), limits_ms, RUN_LOG])
        report_cmd = shlex.join([
            java, *TOOL_JVM, "-Xmx256m", "-cp", f"{OUT_DIR}:{analysis_cp}", REPORT_CLASS,
            EXEC_FILE, OUT_DIR, solution_file, REPORT])
        steps = (f"{run_cmd} >/dev/null 2>{STDERR}\n"
                 f"[ -f {EXEC_FILE} ] || exit 0\n"
                 f"exec {report_cmd}\n")
        sources = {solution_file: source.encode(), f"{test_class}.java": layout.source.encode()}
        compiled = self._compile_warm(ctx, sources)
        if compiled is not None and compiled[0].exit_code != 0:  # javac's verdict: nothing to run
            return [self._build_error(compiled[0].messages, solution_file)]
        limits = SandboxLimits(wall_s=wall, cpu_s=2 * wall, memory_mb=0,
                               output_bytes=ctx.limits.output_bytes, file_size_mb=64,
                               processes=MIN_THREADS)
        if compiled is not None:  # the classes from the warm javac, the helpers compiled once
            classes = {f"{OUT_DIR}/{name}": data for name, data in {**compiled[0].classes, **compiled[1]}.items()}
            collecting = replace(limits, output_bytes=max(limits.output_bytes, EXEC_CAP // 16))
            instrumented = self._instrument(ctx, {name: data for name, data in compiled[0].classes.items()
                                                  if not _is_test_class(name, test_class)})
            if instrumented is not None:  # probes already in the solution's classes: no agent to start
                run_cmd = shlex.join([
                    java, *java_flags(heap), f"-Djacoco-agent.destfile={EXEC_FILE}",
                    f"-Dbw.jacoco.offline={_offline_runtime()}", "-cp", f"{OUT_DIR}:{AGENT}",
                    RUN_CLASS, test_class, str(len(timeouts)), limits_ms, RUN_LOG])
                self.offline_runs += 1
            run = ctx.sandbox.run(["/bin/sh", "-c", f"exec {run_cmd} >/dev/null 2>{STDERR}\n"],
                                  files={**classes, **(instrumented or {}), AGENT: _agent_jar()},
                                  limits=collecting, collect=(RUN_LOG, STDERR, EXEC_FILE))
            if len(run.files.get(EXEC_FILE, b"")) >= EXEC_CAP:
                raise InfraError(f"{self.tool}: the execution data is larger than {EXEC_CAP >> 20} MiB")
            if run.timed_out or EXEC_FILE not in run.files:  # nothing to analyse
                proc = replace(run, exit_code=0)
            else:
                proc = self._report(ctx, run, classes, solution_file, report_cmd, limits)
            return [self._measurement(proc, source, solution_file, len(timeouts))]
        else:
            files = {**sources, f"{RUN_CLASS}.java": _source(f"{RUN_CLASS}.java"),
                     f"{REPORT_CLASS}.java": _source(f"{REPORT_CLASS}.java"), AGENT: _agent_jar()}
            script = f"{compile_cmd} >{JAVAC_LOG} 2>&1 || {{ echo $? >{BUILD_FAILED}; exit 0; }}\n" + steps
        proc = ctx.sandbox.run(
            ["/bin/sh", "-c", script],
            files=files,
            limits=limits,
            collect=(JAVAC_LOG, BUILD_FAILED, RUN_LOG, REPORT, STDERR),
        )
        return [self._measurement(proc, source, solution_file, len(timeouts))]

    def _report(self, ctx: SampleContext, run: ProcessResult, classes: dict[str, bytes],
                solution_file: str, report_cmd: str, limits: SandboxLimits) -> ProcessResult:
        """The test JVM's result with the coverage report added (``REPORT`` in its files; its
        exit status and stderr those of the analysis): from this thread's warm JVM, else from
        ``report_cmd`` in a sandbox call of its own."""
        files = {EXEC_FILE: run.files[EXEC_FILE], **classes}
        server = self._servers.get(ctx.sandbox) if self.warm else None
        if server is not None:
            answer = server.run(files, solution_file)
            if answer is not None and answer.exit_code == 0 and answer.report is not None:
                return replace(run, exit_code=0, files={**run.files, REPORT: answer.report})
            server.close()  # it failed (a class file JaCoCo cannot read, say): the command line says why
        analysis = ctx.sandbox.run(["/bin/sh", "-c", f"exec {report_cmd}\n"], files=files, limits=limits,
                                   collect=(REPORT,))
        return replace(run, exit_code=analysis.exit_code, stderr=analysis.stderr, stdout=analysis.stdout,
                       timed_out=analysis.timed_out, files={**run.files, **analysis.files})

    def _instrument(self, ctx: SampleContext, classes: dict[str, bytes]) -> dict[str, bytes] | None:
        """``classes`` (the solution's class files: name -> bytes) instrumented for JaCoCo's
        offline runtime by this thread's warm JVM, under ``OUT_DIR``; None: run the tests under the
        agent (no warm JVM yet, or JaCoCo cannot instrument one of them: the analysis then says
        why, as it says it on the command line)."""
        server = self._servers.get(ctx.sandbox) if self.warm and classes else None
        if server is None:
            return None
        answer = server.run({f"{OUT_DIR}/{name}": data for name, data in classes.items()}, "--instrument")
        if answer is None or answer.exit_code != 0 or answer.report is None:
            return None
        found = _instrumented(answer.report, set(classes))
        return {f"{OUT_DIR}/{name}": data for name, data in found.items()} if found is not None else None

    def _server(self, sandbox: Sandbox) -> JavaToolServer:
        analysis_cp = ":".join(str(toolbox.java_lib(j)) for j in ANALYSIS_JARS)
        helpers = {f"bw_helpers/{name}": data for name, data in (self._helpers or {}).items()}
        return JavaToolServer(sandbox, _program("java"), list(TOOL_JVM), f"bw_helpers:{analysis_cp}", "jacoco",
                              [f"{FOLDER}/{EXEC_FILE}", f"{FOLDER}/{OUT_DIR}", ARGUMENT, REPORT_PATH],
                              helpers, REPORT_ALLOWANCE_S, self.tool)

    def close(self) -> None:
        self._servers.close()

    def _compile_warm(self, ctx: SampleContext,
                      sources: dict[str, bytes]) -> tuple[Compiled, dict[str, bytes]] | None:
        """The solution and test class compiled by the Java language's warm javac (as the
        runner compiles them: the coverage run measures the classes the tests ran), and this
        criterion's two helper programs' classes, compiled once; None: compile in the sample's
        sandbox call (no warm javac here, or it failed)."""
        if not self.warm or not isinstance(ctx.lang, JavaLanguage):
            return None
        compiled = ctx.lang.compile_warm(ctx.sandbox, sources)
        if compiled is None:
            return None
        with self._helpers_lock:
            if self._helpers is None:
                self._helpers = _helper_classes(ctx.sandbox)
        return compiled, self._helpers

    def _measurement(self, proc: ProcessResult, source: str, solution_file: str,
                     n_tests: int) -> Measurement:
        files = proc.files
        if proc.timed_out:
            raise InfraError(f"{self.tool}: the coverage run took longer than {proc.wall_ms / 1000:.0f} s")
        if BUILD_FAILED in files:
            return self._build_error(files.get(JAVAC_LOG, b"").decode("utf-8", "replace"), solution_file)
        log = files.get(RUN_LOG, b"").decode("utf-8", "replace").splitlines()
        if not any(row.startswith("begin ") for row in log):
            stderr = files.get(STDERR, b"").decode("utf-8", "replace").strip()
            raise InfraError(f"{self.tool}: the test JVM did not start: {stderr[-800:]}")
        statuses, ended = _statuses(log, n_tests)
        tests = {s: statuses.count(s) for s in dict.fromkeys(statuses)}
        if REPORT not in files:
            tail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
            unsupported = [r.strip() for r in tail.splitlines() if "requires ASM9" in r]
            if proc.exit_code != 0 and unsupported:  # JaCoCo 0.8.6 visits classes with ASM 8's API
                return Measurement(score=None, unit=self.unit, verdict="n/a", details={"tests": tests},
                                   output=f"{self.tool} cannot analyse the class files of this "
                                          f"solution (a Java 17 feature such as sealed classes): "
                                          f"{unsupported[-1]}")
            if proc.exit_code != 0:
                raise InfraError(f"{self.tool}: the coverage report failed: {tail[-800:]}")
            return Measurement(score=0.0, unit=self.unit, details={"tests": tests},
                               error=f"no coverage data: {ended or 'the agent wrote none'}")
        coverage = parse_report(files[REPORT].decode("utf-8", "replace"))
        if coverage.nomatch:
            raise InfraError(f"{self.tool}: execution data does not match the classes {coverage.nomatch}")
        implicit = coverage.without_implicit_constructors(source)
        return self._coverage(coverage, tests, implicit, ended)

    def _coverage(self, cov: Coverage, tests: dict[str, int], implicit: list[int],
                  ended: str | None) -> Measurement:
        total_lines = len(cov.lines)
        covered_branches, total_branches = cov.branches
        total = total_lines + total_branches
        if total == 0:
            return Measurement(score=None, unit=self.unit, verdict="n/a",
                               output="the solution has no executable code")
        missed, partial = cov.missed_lines, cov.partial_branch_lines
        details: dict[str, Any] = {
            "line_ratio": cov.covered_lines / total_lines if total_lines else None,
            "branch_ratio": covered_branches / total_branches if total_branches else None,
            "lines": {"covered": cov.covered_lines, "total": total_lines},
            "branches": {"covered": covered_branches, "total": total_branches},
            "missed_lines": missed,
            "partial_branch_lines": {str(n): {"missed": cov.lines[n][1],
                                              "total": cov.lines[n][1] + cov.lines[n][2]}
                                     for n in partial},
            "tests": tests,
            "implicit_constructor_lines": implicit,
        }
        out = [f"lines {cov.covered_lines}/{total_lines}, branches {covered_branches}/{total_branches}"]
        if missed:
            out.append(f"lines not covered: {line_ranges(missed)}")
        if partial:
            out.append("branches not taken: " + ", ".join(
                f"line {n} ({cov.lines[n][1]} of {cov.lines[n][1] + cov.lines[n][2]})" for n in partial))
        not_passed = {s: k for s, k in tests.items() if s != "pass"}
        if not_passed:
            out.append("test cases that did not pass (what they ran counts): " + ", ".join(
                f"{k} {s}" for s, k in not_passed.items()))
        if ended:
            out.append(ended)
        first = min([*missed, *partial], default=None)
        return Measurement(score=(cov.covered_lines + covered_branches) / total, unit=self.unit,
                           output="\n".join(out), line=first, details=details)

    def _build_error(self, log: str, solution_file: str) -> Measurement:
        log = log.strip()
        errors = [(m.group("file"), int(m.group("line"))) for m in JAVAC_ERROR.finditer(log)]
        ours = [f for f, _ in errors if Path(f).name in (f"{RUN_CLASS}.java", f"{REPORT_CLASS}.java")]
        if not errors or ours:
            raise InfraError(f"{self.tool}: javac failed on benchwright's coverage programs: {log[-800:]}")
        line = next((n for f, n in errors if Path(f).name == solution_file), None)
        return Measurement(score=0.0, unit=self.unit, line=line, error=log[:16000],
                           output="the solution or its tests do not compile: no coverage",
                           details={"build_error": True})


def _is_test_class(name: str, test_class: str) -> bool:
    """Whether a class file is the generated test class's or one nested in it (the agent's
    ``excludes``: ``BwTests`` and ``BwTests$*``)."""
    stem = name.removesuffix(".class")
    return stem == test_class or stem.startswith(f"{test_class}$")


@functools.cache
def _offline_runtime() -> str:
    """The class of JaCoCo's runtime that offline-instrumented classes call (its package is
    named by the build: ``org.jacoco.agent.rt.internal_<id>.Offline``), from org.jacoco.core."""
    try:
        with zipfile.ZipFile(toolbox.java_lib(ANALYSIS_JARS[0])) as core:
            text = core.read("org/jacoco/core/jacoco.properties").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        raise InfraError(f"cannot read JaCoCo's runtime package from {toolbox.java_lib(ANALYSIS_JARS[0])}: {e}") from e
    m = re.search(r"^RUNTIMEPACKAGE=([\w.]+)\s*$", text, re.MULTILINE)
    if m is None:
        raise InfraError(f"{toolbox.java_lib(ANALYSIS_JARS[0])} names no RUNTIMEPACKAGE")
    return f"{m.group(1)}.Offline"


def _instrumented(report: bytes, names: set[str]) -> dict[str, bytes] | None:
    """The warm JVM's instrumented classes (``<b64 path> <b64 class>`` lines, then ``end``),
    when they are exactly the classes sent (relative to ``OUT_DIR``), each a class file of at
    most :data:`CLASS_CAP` bytes; else None."""
    rows = report.split(b"\n")
    if rows[-2:] != [b"end", b""]:
        return None
    found: dict[str, bytes] = {}
    for row in rows[:-2]:
        parts = row.split(b" ")
        try:
            name = base64.b64decode(parts[0], validate=True).decode("utf-8")
            data = base64.b64decode(parts[1], validate=True)
        except (ValueError, IndexError):
            return None
        if len(parts) != 2 or name in found or not data.startswith(CLASS_MAGIC) or len(data) > CLASS_CAP:
            return None
        found[name] = data
    return found if set(found) == names else None


def _statuses(log: list[str], n_tests: int) -> tuple[list[str], str | None]:
    """Each test's status in ``BwCoverageRun``'s log, and how the JVM ended when it did not
    reach the end (a test that started without a result is ``error``, later ones ``not_run``)."""
    found: dict[int, str] = {}
    started: list[int] = []
    for row in log:
        m = re.fullmatch(r"(start|pass|fail|error|timeout) (\d+)", row.strip())
        if m and m.group(1) == "start":
            started.append(int(m.group(2)))
        elif m:
            found[int(m.group(2))] = m.group(1)
    unloadable = next((row for row in log if row.startswith("error-loading ")), None)
    if unloadable is not None:  # the test class's static initialisation threw (its prelude)
        return ["error"] * n_tests, f"the test class could not be loaded: {unloadable[14:].strip()}"
    if "done" in (row.strip() for row in log):
        return [found.get(i, "not_run") for i in range(n_tests)], None
    culprit = started[-1] if started and started[-1] not in found else None
    statuses = [found.get(i, "error" if i == culprit else "not_run") for i in range(n_tests)]
    if culprit is None:
        return statuses, "the test JVM ended before running the tests (a static initializer?)"
    return statuses, (f"the JVM ended during test case {culprit + 1} (System.exit, Runtime.halt "
                      "or a crash); the tests after it did not run")
