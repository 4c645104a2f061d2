"""What the compiled languages (Rust, Go) share: one sandbox call that builds the test program
and runs it once per test case under ``nativerunner.py`` (read its docstring for the protocol
between the runner and the test program).

A language module generates the sources, describes the build and the run (a :class:`Plan`),
and turns the runner's records into outcomes: it maps lines of the generated files to the code
each test reports (:class:`SourceMap`) and reads its compiler's messages.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestOutcome, TestSpec
from benchwright.lang.buildcache import BuildCache, build_key, collect_output_bytes
from benchwright.lang.protocol import parse_lines
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

RUNNER = resources.files("benchwright.lang").joinpath("nativerunner.py").read_bytes()
RUNNER_FILE = "bw_runner.py"
BUILD_ALLOWANCE_S = 60.0
"""Wall seconds the build may take (rustc or go build: well under a second on a small sample)."""
START_ALLOWANCE_S = 5.0
"""Wall seconds for the runner's start and end."""
PER_TEST_ALLOWANCE_S = 0.5
"""Wall seconds per test case on top of its limit (starting and reaping its process)."""
BUILD_DATA_MB = 2048
"""RLIMIT_DATA of the compiler (its address space is not limited: it reserves a lot)."""
MIN_PROCESSES = 256
"""RLIMIT_NPROC counts threads: the Go tools and rustc start a few dozen."""
OUTPUT_CAP_BYTES = 4096
"""Output kept per test case."""
MESSAGE_CAP = 16000


@dataclass
class Plan:
    """One sample for the runner: files, how to build them, how to run one test."""

    files: dict[str, bytes]
    build: list[dict[str, Any]]
    """Steps: ``{"argv": [...], "cwd": "dir" | None, "env": {...}}``."""
    run_argv: list[str]
    run_env: dict[str, str] = field(default_factory=dict)
    data_mb: int = 0
    """RLIMIT_DATA of every test process (0: none)."""
    stack_mb: int = 0
    location: str | None = None
    """Regex: group 1 a generated file's name, group 2 a line, found in a crashed test's output."""
    crash_markers: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    program: str | None = None
    """The test program the build makes (a path in the work folder): with :attr:`key_parts`,
    kept for a later sample with the same build."""
    key_parts: tuple[str, ...] | None = None
    """What shapes the program besides the build's steps, its compiler and :attr:`files`
    (they are always in its key, :func:`benchwright.lang.buildcache.build_key`); None: the
    program does not follow from them and is never kept."""


def wall_limit_s(limits: SandboxLimits, tests: list[TestSpec], test_timeout_s: float) -> float:
    """The sandbox's wall limit for one sample: the build, every test's own limit, slack."""
    budget = BUILD_ALLOWANCE_S + START_ALLOWANCE_S + sum(
        (t.timeout_s or test_timeout_s) + PER_TEST_ALLOWANCE_S for t in tests
    )
    return max(limits.wall_s, budget)


def run_plan(
    sandbox: Sandbox,
    plan: Plan,
    tests: list[TestSpec],
    *,
    limits: SandboxLimits,
    test_timeout_s: float,
    language: str,
    builds: BuildCache | None = None,
) -> tuple[ProcessResult, list[dict[str, Any]]]:
    """Build and run every test in ONE sandbox call; the process and the runner's records.
    With ``builds`` and a plan whose program can be kept, an earlier sample's program of the same build
    runs instead of a build (the first record then says ``cached``), and the program this
    build makes is offered to later samples.

    Raises:
        InfraError: the runner itself failed, or the build could not start.
    """
    key = None
    if builds is not None and plan.program is not None and plan.key_parts is not None:
        key = build_key(sandbox.name, plan.build[-1]["argv"][0], [json.dumps(plan.build)],
                        plan.files, *plan.key_parts)
    with builds.lookup(key) if builds is not None else contextlib.nullcontext() as program:
        return _run_plan(sandbox, plan, tests, limits=limits, test_timeout_s=test_timeout_s,
                         language=language, builds=builds, key=key, program=program)


def _run_plan(sandbox: Sandbox, plan: Plan, tests: list[TestSpec], *, limits: SandboxLimits,
              test_timeout_s: float, language: str, builds: BuildCache | None, key: str | None,
              program: bytes | None) -> tuple[ProcessResult, list[dict[str, Any]]]:
    nonce = secrets.token_hex(16)
    files = {RUNNER_FILE: RUNNER, **plan.files}
    build: list[dict[str, Any]] = plan.build
    if program is not None and plan.program is not None:
        files = {RUNNER_FILE: RUNNER, plan.program: program}
        build = []
    job = {
        "nonce": nonce,
        "build": build,
        "cached": plan.program if program is not None else None,
        "product": plan.program if key is not None and program is None else None,
        "build_timeout_s": BUILD_ALLOWANCE_S,
        "build_data_mb": max(BUILD_DATA_MB, limits.memory_mb),
        "run": {"argv": plan.run_argv, "env": plan.run_env},
        "tests": [{"timeout": t.timeout_s or test_timeout_s} for t in tests],
        "data_mb": plan.data_mb,
        "stack_mb": plan.stack_mb,
        "output_cap": OUTPUT_CAP_BYTES,
        "location": plan.location,
        "crash_markers": list(plan.crash_markers),
        "dirs": list(plan.dirs),
    }
    wall = wall_limit_s(limits, tests, test_timeout_s)
    output_bytes = max(limits.output_bytes, 64 * 1024 + len(tests) * (4 * OUTPUT_CAP_BYTES + 4096))
    if job["product"]:  # the program comes back too
        output_bytes = collect_output_bytes(output_bytes)
    run_limits = SandboxLimits(
        wall_s=wall,
        cpu_s=limits.cpu_s if limits.cpu_s is not None else 2 * wall,
        memory_mb=0,  # compilers and the Go runtime reserve far more than they use
        output_bytes=output_bytes,
        file_size_mb=limits.file_size_mb,
        processes=max(limits.processes, MIN_PROCESSES),
    )
    argv, stdin = [sandbox.python, "-I", "-S", RUNNER_FILE], json.dumps(job).encode()
    if program is not None and builds is not None:  # nothing to build: in this thread's warm sandbox
        proc = builds.servers.run(sandbox, argv, files=files, limits=run_limits, stdin=stdin)
    else:
        proc = sandbox.run(argv, files=files, limits=run_limits, stdin=stdin,
                           collect=(plan.program,) if job["product"] and plan.program else ())
    records = parse_lines(proc.stdout, prefix=f"BWR {nonce} ")
    if builds is not None and key is not None and program is None and plan.program \
            and records and records[0].get("build") == "ok":
        builds.offer(key, proc.files.get(plan.program), records[0].get("sha256"))
    if not records and not proc.timed_out:
        stderr = proc.stderr.decode("utf-8", "replace")
        if "Traceback" in stderr:
            raise InfraError(f"{language}: the test runner failed: {stderr[-2000:]}")
    if records and records[0].get("build") == "infra":
        raise InfraError(f"{language}: {records[0].get('message')}")
    return proc, records


@dataclass
class SourceMap:
    """Where the lines of the generated test file come from, and what each test reports.

    Each test's ``code`` is ``solution`` (the solution's file, exactly as compiled), then for a
    separate test file a marker line, then the test file's shared ``header`` (lines
    ``1..len(header)`` of the file in ``header_file``: imports, prelude) and that test's own
    lines (``functions[i] = (first line in the file, lines)``), then ``footer``.
    """

    solution_file: str
    solution: str
    test_file: str
    header: list[str]
    functions: list[tuple[int, list[str]]]
    footer: list[str]
    marker: str | None = None
    """A line between the solution and the excerpt (None: the test file continues the
    solution's file, as in Rust's single ``main.rs``)."""

    def __post_init__(self) -> None:
        prefix = self.solution + (self.marker + "\n" if self.marker else "")
        self.offset = prefix.count("\n")
        self.header_first = 1 if self.marker else self.solution.count("\n") + 1
        """The file line of the header's first line."""
        head = "".join(line + "\n" for line in self.header)
        tail = "".join(line + "\n" for line in self.footer)
        self.codes = [prefix + head + "".join(ln + "\n" for ln in lines) + tail
                      for _, lines in self.functions]

    def code(self, index: int) -> str:
        return self.codes[index]

    def line(self, index: int, file: str | None, file_line: int | None) -> int | None:
        """A line of a generated file -> the line in test ``index``'s code (None: elsewhere)."""
        if file_line is None or file_line <= 0:
            return None
        name = (file or "").rsplit("/", 1)[-1]
        if name == self.solution_file and file_line <= self.solution.count("\n"):
            return file_line
        if name != self.test_file:
            return None
        rel = file_line - self.header_first
        if 0 <= rel < len(self.header):
            return self.offset + rel + 1
        first, lines = self.functions[index]
        if first <= file_line < first + len(lines):
            return self.offset + len(self.header) + file_line - first + 1
        return None

    def text(self, index: int, line: int | None) -> str:
        """The text of ``line`` in test ``index``'s code."""
        if line is None:
            return ""
        lines = self.codes[index].splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


def build_failure(
    tests: list[TestSpec],
    proc: ProcessResult | None,
    message: str,
    code: Callable[[int], str],
    line: Callable[[int], int | None],
    *,
    status: str = "error",
) -> ExecutionResult:
    """Every test ``error`` (or ``timeout``): the sample did not compile."""
    if len(message) > MESSAGE_CAP:
        message = message[:MESSAGE_CAP] + "\n..."
    outcomes = [
        TestOutcome(t.name, "timeout" if status == "timeout" else "error", message, line(i), code(i),
                    None)
        for i, t in enumerate(tests)
    ]
    return ExecutionResult(outcomes, proc, build_error=message)


def blank(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every match of ``pattern`` (comments, string literals) made spaces; lines
    and columns stay where they were."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def rejected(tests: list[TestSpec], code: Callable[[int], str], why: str, line: int
             ) -> ExecutionResult:
    """A solution refused before it is built (a build error: the model's fault)."""
    return build_failure(tests, None, why, code, lambda i: line)


PROC_SELF = re.compile(r"/proc/(?:self|thread-self)\b")


def flag_suspicious(records: list[dict[str, Any]], solution: str) -> list[dict[str, Any]]:
    """Passes of a solution that reads its own process through ``/proc/self`` (where it could
    find its test's token) are flagged (``TestOutcome.suspicious``); the verdict stands."""
    if not PROC_SELF.search(solution):
        return records
    why = "the solution opens /proc/self: it could have read its test's token and forged the pass"
    return [dict(r, suspicious=why) if r.get("status") == "pass" and "i" in r else r
            for r in records]


def usage_extra(records: list[dict[str, Any]]) -> dict[str, object]:
    """``build_ms`` from the build line and ``build`` (``compiled``, or ``cached``: an earlier
    sample's program ran), for ``ExecutionResult.extra``."""
    head = records[0] if records else {}
    if head.get("build") != "ok":
        return {}
    extra: dict[str, object] = {"build": "cached" if head.get("cached") is True else "compiled"}
    value = head.get("build_ms")
    if isinstance(value, int | float):
        extra["build_ms"] = value
    return extra
