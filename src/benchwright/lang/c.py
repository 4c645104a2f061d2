"""C and C++: compile the solution with its test cases once, run every test in a child process.

How one sample runs
-------------------
The work folder gets:

* ``bw_tests.c`` (``.cpp``): ``#define main bw_solution_main`` (a ``main`` the solution may
  carry is renamed, never run), the solution verbatim under ``#line 1 "solution.c"``,
  ``#include "bw_driver.h"`` (``#undef main``; ``<assert.h>``, ``<stdbool.h>``, ``<stdio.h>``,
  ``<stdlib.h>``, ``<string.h>`` -- C++: ``<cassert>``, ``<cstdio>``, ``<cstdlib>``,
  ``<cstring>``, ``<string>``, ``<vector>`` -- and the helpers ``assert_str_eq(actual,
  expected)`` and ``assert_int_eq(actual, expected)``), the prelude under ``#line N
  "prelude.c"``, ``#include "bw_assert.h"`` (``assert`` reports to the judge instead of
  aborting), then one ``static void bw_test_<i>(void)`` per test case whose body is the test's
  code verbatim under ``#line M "test<i>.c"``, and ``bw_run_test(i)`` that calls it. The
  ``#line`` numbers are those of the code shown in ``TestOutcome.code`` (solution, prelude,
  that test), so compiler errors and assertion failures name lines of that code.
* ``bw_main.o``: ``main()`` (``cmain.c.tmpl``), compiled as C or C++ in a translation unit
  of its own so the solution's macros cannot reach it. ``bw_tests INDEX`` runs one test and
  writes ``OK <ns>`` to fd 3 once the test body returned (C++: an uncaught exception is caught
  and reported with its type and ``what()``), then exits normally (``exit(0)``: buffered output
  is flushed, destructors run).
* ``bw_driver.h``, ``bw_assert.h`` (``cdriver.h.tmpl``, ``cassert.h.tmpl``) and, for the
  compiler's quotes, files named like the ``#line`` labels holding each part at its lines.
* ``bw_judge``: a trusted program (``cjudge.c.tmpl``, no solution code in it).

``bw_judge`` and ``bw_main.o`` are built by the host's compiler once per harness process (the
sandboxes show the same ``/usr``) and passed in as files. One sandbox call runs ``sh -c
'timeout 60 gcc ... -o bw_tests bw_tests.c bw_main.o -lm || <marker>; exec ./bw_judge
./bw_tests'``: the compiler runs once per sample (its CPU time is ``extra["build_cpu_ms"]``).
The judge reads its job from stdin (a nonce, the output cap, memory and stack limits, each
test's time limit), makes itself non-dumpable, then for every test forks a child that execs
``bw_tests i`` in a process group of its own (stdin /dev/null, stdout+stderr on one pipe,
line-buffered, kept up to 4 KB plus the last 2 KB; fd 3 the report pipe; RLIMIT_AS =
``limits.memory_mb``, a 64 MB stack). It waits for the child with a deadline (pidfd + poll),
kills the group when the child ends or overstays (``timeout``; later tests still run) and
decides the verdict: ``pass`` needs exit status 0 and a report that is exactly one ``OK``
line; ``fail`` for a failed ``assert`` (and, here in Python, for glibc's ``Assertion ...
failed`` plus SIGABRT of an ``assert`` compiled before the override, in the solution);
``error`` for a signal (``Segmentation fault``...), an uncaught C++ exception, or an exit
before the test body returned. It prints ``BWR-<nonce> {json}`` lines
(:mod:`benchwright.lang.protocol`) and, last, the summed CPU time and the largest peak RSS of
the test children (``wait4``), so the compiler is not counted in ``cpu_ms``/``max_rss_bytes``.
The sandbox's address-space limit is ``max(memory_mb, 2048)`` for the compiler's sake.

A sample whose build is the same as an earlier one's (:mod:`benchwright.lang.buildcache`: the
same generated source, driver and flags; not one that reads the clock or a file outside the work
folder, :data:`_UNREPRODUCIBLE`) gets that program instead: the call is the judge alone, started
through the dynamic loader (no shell), and the judge makes the program executable. After a
compile, ``sha256sum`` prints the program's hash as the first line of stdout, before the judge
starts any of the sample's code; the program read back after the tests is kept only when it
still has that hash.

A compile failure leaves the compiler's log: a build error (the model's fault, with the line
of the first error in the solution or in that test), unless the log shows no error at all
(the toolchain itself failed: an infra error).

What a hostile solution can and cannot do
-----------------------------------------
Cannot make a test pass that it did not pass: exiting early (``exit(0)``, ``_exit``,
``abort``, a signal, killing its own group) is an error; writing ``BWR`` lines to stdout, to
stderr or to the sandbox's stdout through ``/proc/1/fd/1`` is ignored (no nonce: the nonce
reaches only the judge, through a pipe it drains before the first child exists, and the
judge is non-dumpable, so ``/proc/<judge>/mem`` and ``/proc/<judge>/fd`` are closed to
other processes of the sandbox's uid); writing result or marker files does nothing (the
judge's results never touch a file); a ``main`` of its own never runs; static
constructors run in the test child, not in the judge.

Can still: (1) forge its *own* test's verdict from inside the test process, because the
assertion runs there: redefine ``assert`` or ``bw_assert_failed`` (the solution is compiled
in the same translation unit as the tests, before them), or write ``OK 0`` to fd 3 and exit 0
from inside the function under test -- an attack written against this driver; (2) kill the
judge (``kill(getppid(), SIGKILL)``, ``kill(-1, ...)``): the tests without a result become
``error`` or ``timeout``, never ``pass``; (3) leave a ``setsid`` daemon that outlives its test
(it dies with the sandbox) and disturbs later tests, e.g. by killing the judge; (4) under
the ``rlimit`` backend (no isolation) anything its uid can do, including killing the
harness or, as root, reading the judge's memory. A solution that merely special-cases the
tests' inputs is out of scope of any driver.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang import pch
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec
from benchwright.lang.buildcache import BuildCache, build_key, collect_output_bytes
from benchwright.lang.mutate import Mutant, brace_mutants, find_body
from benchwright.lang.protocol import all_tests, collect, parse_lines
from benchwright.lang.toolchain import TOOL_PATH, find_tool, missing_tools, need_tool, tool_version
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

__all__ = ["CLanguage", "CppLanguage", "judge_program", "wall_limit_s"]

COMPILE_TIMEOUT_S = 60.0
"""Wall seconds the compiler may take (a few hundred ms for a usual sample)."""
START_ALLOWANCE_S = 5.0
"""Wall seconds for everything else: the shell, the judge, reaping."""
PER_TEST_OVERHEAD_S = 0.5
"""Wall seconds per test on top of its time limit (fork, exec, reaping)."""
COMPILER_MEMORY_MB = 2048
"""The sandbox's address-space limit while compiling (cc1plus needs a few hundred MB); each
test child gets ``limits.memory_mb`` from the judge."""
MIN_PROCESSES = 16
"""The compiler driver runs cc1, as, collect2 and ld."""
STACK_MB = 64
"""RLIMIT_STACK of a test child: deep recursion is common in solutions."""
OUTPUT_CAP_BYTES = 4096
"""Output kept per test (the head, plus the last 2 KB when there is more)."""
JUDGE_TEMPLATE = "cjudge.c.tmpl"
SOLUTION_MAIN = "bw_solution_main"
"""What a ``main`` of the solution is renamed to (``#define main ...``), never run."""

BUILD_LOG = "bw_cc.txt"
BUILD_FAILED = "bw_cc_failed"
PROGRAM = "bw_tests"
JUDGE = "bw_judge"

_COMPILE_ERROR = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error:", re.M
)
_LINK_ERROR = re.compile(r"undefined reference to [`'\u2018](?P<sym>[^'\u2019\n]+)['\u2019]")
_GLIBC_ASSERT = re.compile(
    r"^(?:[^:\n]*: )?(?P<file>[^:\n]+):(?P<line>\d+): (?:.*?: )?"
    r"Assertion [`'\u2018](?P<expr>.*)['\u2019] failed\.$",
    re.M,
)
_UNREPRODUCIBLE = re.compile(
    r"__(?:DATE|TIME|TIMESTAMP)__|\.incbin\b"
    r"|#[ \t]*include(?:_next)?[ \t]*(?:[<\"][ \t]*/|[<\"][^>\"\n]*\.\.|[^\s<\"])"
)
"""What makes a program not follow from its sources: the clock, a file outside the work folder
(an absolute or ``..`` path, a computed include, an assembler's ``.incbin``). Such a sample is
compiled every time; no program of it is kept."""
_TEMP_OBJECT = re.compile(r"\S*/cc\w+\.o\b")
_ENTRY = re.compile(
    r"^(?P<sig>(?:template\s*<[^>]*>\s*)?[A-Za-z_][\w\s\*&:<>,]*?[\s\*&])"
    r"(?P<name>[A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*"
    r"(?:const\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>,\s\*&]+)?\{",
    re.M,
)
_KEYWORDS = frozenset(
    {"if", "for", "while", "switch", "return", "sizeof", "else", "do", "case", "catch", "main"}
)
_LIBRARIES = {
    re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]openssl/", re.M): ("-lssl", "-lcrypto"),
}
"""Libraries linked when the program includes their headers (besides ``-lm``, always)."""


def _resource(name: str) -> str:
    return resources.files("benchwright.lang").joinpath(name).read_text(encoding="utf-8")


def wall_limit_s(limits: SandboxLimits, timeouts: list[float]) -> float:
    """The sandbox's wall limit for compiling and running tests with these time limits."""
    return max(
        limits.wall_s,
        COMPILE_TIMEOUT_S + START_ALLOWANCE_S + sum(t + PER_TEST_OVERHEAD_S for t in timeouts),
    )


# --------------------------------------------------------------------------- the judge program

_host_lock = threading.Lock()
_host_cache: dict[tuple[str, str], bytes] = {}


def judge_program(compiler: str) -> bytes:
    """The judge executable, built by ``compiler`` on the host from ``cjudge.c.tmpl`` (once per
    harness process).

    Raises:
        InfraError: it does not build.
    """
    return _host_build(compiler, "judge")


def _host_build(compiler: str, what: str) -> bytes:
    """Trusted code built once per harness process by the host's ``compiler`` (the sandboxes
    show the same /usr): ``judge`` (the judge program) or ``main.c``/``main.cpp`` (the test
    program's ``main`` as an object file, linked into every sample).

    Raises:
        InfraError: it does not build.
    """
    key = (compiler, what)
    with _host_lock:
        cached = _host_cache.get(key)
        if cached is not None:
            return cached
        with tempfile.TemporaryDirectory(prefix="bw-cbuild-") as tmp:
            out = os.path.join(tmp, "out")
            if what == "judge":
                src = os.path.join(tmp, "bw_judge.c")
                text = _resource(JUDGE_TEMPLATE)
                attempts = [[compiler, "-x", "c", "-std=gnu11", "-O2", "-s", "-o", out, src]]
            else:
                src = os.path.join(tmp, f"bw_{what}")
                text = _resource("cmain.c.tmpl")
                std = "-std=c++17" if what.endswith("cpp") else "-std=gnu11"
                attempts = [[compiler, std, "-O1", "-c", "-o", out, src]]
            with open(src, "w", encoding="utf-8") as fh:
                fh.write(text)
            errors = ""
            for argv in attempts:
                try:
                    done = subprocess.run(
                        argv, capture_output=True, text=True, timeout=180, check=False,
                        env={"PATH": TOOL_PATH, "LC_ALL": "C", "TMPDIR": tmp},
                    )
                except (OSError, subprocess.TimeoutExpired) as e:
                    errors = str(e)
                    continue
                if done.returncode == 0 and os.path.isfile(out):
                    with open(out, "rb") as fh:
                        data = fh.read()
                    _host_cache[key] = data
                    return data
                errors = done.stderr.strip()[-2000:]
        raise InfraError(f"could not build benchwright's C/C++ test {what} with {compiler}: {errors}")


@functools.lru_cache(maxsize=8)
def interpreter(program: bytes) -> str | None:
    """The dynamic loader an ELF64 little-endian ``program`` names (``PT_INTERP``), when it is
    an existing file; it runs the program from a file that is not executable."""
    if program[:6] != b"\x7fELF\x02\x01" or len(program) < 64:
        return None
    phoff = int.from_bytes(program[0x20:0x28], "little")
    size = int.from_bytes(program[0x36:0x38], "little")
    count = int.from_bytes(program[0x38:0x3A], "little")
    for k in range(count):
        at = phoff + k * size
        header = program[at:at + 56]
        if len(header) < 56 or int.from_bytes(header[0:4], "little") != 3:  # PT_INTERP
            continue
        offset = int.from_bytes(header[8:16], "little")
        length = int.from_bytes(header[32:40], "little")
        path = program[offset:offset + length].split(b"\0", 1)[0].decode("ascii", "replace")
        return path if path.startswith("/") and os.path.isfile(path) else None
    return None


# --------------------------------------------------------------------------- the layout


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


@dataclass(frozen=True)
class _Layout:
    """Where every part of the generated test program sits, and the code shown per test."""

    solution: str
    prelude: str
    tests: list[TestSpec]
    ext: str
    cpp: bool

    @property
    def solution_label(self) -> str:
        return f"solution{self.ext}"

    @property
    def prelude_label(self) -> str:
        return f"prelude{self.ext}"

    def test_label(self, i: int) -> str:
        return f"test{i}{self.ext}"

    @property
    def test_offset(self) -> int:
        """Lines before a test's first line in its shown code."""
        return self.solution.count("\n") + self.prelude.count("\n")

    def code(self, i: int) -> str:
        return self.solution + self.prelude + _with_newline(self.tests[i].code)

    def source(self, precompiled: bool = False) -> str:
        parts = [
            f"#define main {SOLUTION_MAIN}\n",
            *([f'#include "{pch.HEADER}"\n'] if precompiled else []),
            f'#line 1 "{self.solution_label}"\n',
            self.solution,
            '#line 1 "bw_tests_driver"\n',
            '#include "bw_driver.h"\n',
            '#include "bw_assert.h"\n',
        ]
        if self.prelude:
            parts += [
                f'#line {self.solution.count(chr(10)) + 1} "{self.prelude_label}"\n',
                self.prelude,
                '#line 1 "bw_tests_driver"\n',
                '#include "bw_assert.h"\n',
            ]
        first = self.test_offset + 1
        for i, test in enumerate(self.tests):
            parts += [
                f"static void bw_test_{i}(void) {{\n",
                f'#line {first} "{self.test_label(i)}"\n',
                _with_newline(test.code),
                '#line 1 "bw_tests_driver"\n',
                "}\n",
            ]
        linkage = 'extern "C" ' if self.cpp else ""
        parts.append(f"{linkage}int bw_test_count(void) {{ return {len(self.tests)}; }}\n")
        parts.append(f"{linkage}void bw_run_test(int bw_index) {{\n    switch (bw_index) {{\n")
        parts += [f"    case {i}: bw_test_{i}(); break;\n" for i in range(len(self.tests))]
        parts.append("    default: break;\n    }\n}\n")
        return "".join(parts)

    def excerpt_files(self) -> dict[str, bytes]:
        """Files named like the ``#line`` labels, with each part at its shown lines, so the
        compiler can quote the offending line in its messages."""
        files = {self.solution_label: self.solution.encode()}
        if self.prelude:
            files[self.prelude_label] = ("\n" * self.solution.count("\n") + self.prelude).encode()
        for i, test in enumerate(self.tests):
            files[self.test_label(i)] = ("\n" * self.test_offset + _with_newline(test.code)).encode()
        return files

    def line_in(self, i: int, label: str, line: int) -> int | None:
        """A ``label:line`` position the compiler or an assertion named -> the line in test
        ``i``'s shown code (None when it is not part of that code)."""
        if label.endswith(self.solution_label) or label.endswith(self.prelude_label):
            return line
        if label.endswith(self.test_label(i)) and label.rsplit("/", 1)[-1] == self.test_label(i):
            return line
        return None


# --------------------------------------------------------------------------- the language


@dataclass(frozen=True)
class _Sample:
    """One sample's test program as :meth:`_CFamily.run_tests` prepared it: what ``_run``
    compiles (or takes from an earlier sample's build) and runs."""

    layout: _Layout
    plain: str
    """The test program's source without a precompiled header (what the build key hashes)."""
    compile_argv: list[str]
    driver: dict[str, bytes]
    """benchwright's own files of the build: ``bw_main.o`` and the driver's headers."""
    judge: bytes
    """The test judge's executable."""
    job: str
    """The judge's stdin: the nonce, the caps and each test's time limit."""
    nonce: str
    timeouts: list[float]
    limits: SandboxLimits
    key: str | None
    """The build's key in the build cache; None: this build is never kept."""
    report: str
    """The shell line that prints the program's hash after a compile (empty without a key)."""


class _CFamily(Language):
    """Shared by C and C++; subclasses set the compiler and flags."""

    compiler = "gcc"
    flags: tuple[str, ...] = ()
    cpp = False

    def __init__(self, precompiled_headers: bool = True, build_cache: bool = True) -> None:
        self.precompiled_headers = precompiled_headers and self.cpp
        """C++: the solution's leading standard includes from a precompiled header once seen
        twice (False: every sample parses them, the per-sample baseline)."""
        self._headers = pch.HeaderCache()
        self.builds: BuildCache | None = BuildCache() if build_cache else None
        """Test programs of earlier samples, for a later sample with the same build (None:
        every sample is compiled, the per-sample baseline)."""

    def close(self) -> None:
        self._headers = pch.HeaderCache()
        if self.builds is not None:
            self.builds.clear()

    def infer_entry_point(self, code: str) -> str | None:
        return _entry_point(code)

    scaffolding = (
        (r"^\s*(?:int|void)\s+main\s*\(", "a `main` function (a test case is the body of a function "
         "the driver calls: write the asserts themselves)"),
    )

    def _zero(self, returns: str) -> str | None:
        """The statement returning the zero value of ``returns`` (the signature before the
        name, qualifiers included); None when that is not simple to tell."""
        words = [w for w in re.findall(r"\w+|\*", returns)
                 if w not in ("static", "inline", "extern", "const", "constexpr", "volatile")]
        if words == ["void"]:
            return "return;"
        if "*" in words:
            return "return 0;"
        scalar = {"int", "long", "short", "char", "unsigned", "signed", "float", "double", "bool", "_Bool"}
        if words and all(w in scalar or re.fullmatch(r"u?int\d*_t|size_t|ssize_t", w) for w in words):
            return "return 0;"
        return None

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The entry point's body starts with ``return 0;`` (``return;``, ``return {};`` for a
        C++ class type), or ``__builtin_abort();``."""
        signature = (rf"^(?P<before>[ \t]*(?:[\w:<>,]+[ \t\*&]+|[\*&][ \t]*)*?)"
                     rf"(?:\w+::)*{re.escape(entry_point)}[ \t]*\(")
        body = find_body(solution, signature)
        if body is None:
            return []
        statements = [("aborts", "__builtin_abort();")]
        zero = self._zero(body.before)
        if zero is not None:
            statements.insert(0, (f"does `{zero}`", zero))
        return brace_mutants(solution, signature, statements)

    def toolchain(self) -> dict[str, str]:
        path = need_tool(self.compiler, language=self.name, hint=self.install_hint)
        return {self.compiler: tool_version((path, "--version"), hint=self.install_hint)}

    def missing(self) -> str | None:
        return missing_tools((self.compiler,), language=self.name, hint=self.install_hint)

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
        compiler = need_tool(self.compiler, language=self.name, hint=self.install_hint)
        judge = judge_program(compiler)
        layout = _Layout(
            solution=_with_newline(solution) if solution else "",
            prelude=_with_newline(prelude) if prelude else "",
            tests=tests,
            ext=self.file_extension,
            cpp=self.cpp,
        )
        if not tests:
            return ExecutionResult([], None)
        timeouts = [t.timeout_s if t.timeout_s is not None else test_timeout_s for t in tests]
        nonce = secrets.token_hex(16)
        memory_mb = max(0, limits.memory_mb)
        job = f"{nonce}\n{len(tests)} {OUTPUT_CAP_BYTES} {memory_mb} {STACK_MB}\n"
        job += "".join(f"{max(1, round(t * 1000))}\n" for t in timeouts)

        ext = self.file_extension
        main_object = _host_build(compiler, f"main{ext}")
        plain = layout.source()
        libraries = [flag for pattern, flags in _LIBRARIES.items() if pattern.search(plain)
                     for flag in flags]
        linker = ["-fuse-ld=gold"] if self.cpp and find_tool("ld.gold") else []
        compile_argv = [compiler, *self.flags, *linker, "-o", PROGRAM, f"bw_tests{ext}", "bw_main.o",
                        "-lm", *libraries]
        driver = {
            "bw_main.o": main_object,
            "bw_driver.h": _resource("cdriver.h.tmpl").encode(),
            "bw_assert.h": _resource("cassert.h.tmpl").encode(),
        }
        hasher = find_tool("sha256sum")
        key, report = None, ""
        if self.builds is not None and hasher is not None and not _UNREPRODUCIBLE.search(plain):
            # keyed by the source without a precompiled header: with one it is the same program
            key = build_key(sandbox.name, compiler, compile_argv,
                            {f"bw_tests{ext}": plain.encode(), **driver})
            # the program's hash, printed before any of the sample's code runs: the first line
            report = f"{shlex.quote(hasher)} {PROGRAM}\n"
        sample = _Sample(layout, plain, compile_argv, driver, judge, job, nonce, timeouts, limits, key, report)
        with self.builds.lookup(key) if self.builds is not None else nullcontext() as program:
            return self._run(sandbox, sample, program)

    def _run(self, sandbox: Sandbox, sample: _Sample, program: bytes | None) -> ExecutionResult:
        """Compile (unless ``program`` is an earlier sample's; after a compile, the sample's
        ``report`` prints its hash) and run the tests."""
        layout, plain, compile_argv, driver = sample.layout, sample.plain, sample.compile_argv, sample.driver
        judge, job, nonce, timeouts = sample.judge, sample.job, sample.nonce, sample.timeouts
        limits, key, report = sample.limits, sample.key, sample.report
        compiler, ext, tests = compile_argv[0], self.file_extension, layout.tests
        files: dict[str, bytes] = {}
        source = plain
        if program is None:
            includes = pch.leading_includes(layout.solution) if self.precompiled_headers else ()
            # made with the test program's own definition of `main` (else g++ skips it)
            header = self._headers.get(sandbox, compiler,
                                       (*self.flags, f"-Dmain={SOLUTION_MAIN}"), includes)
            if header is not None:
                files = {pch.HEADER: pch.header_text(includes).encode(), pch.PRECOMPILED: header}
                source = layout.source(precompiled=True)
        build_files = {f"bw_tests{ext}": source.encode(), **driver}
        timeout_tool = find_tool("timeout")
        if timeout_tool is not None:
            compile_argv = [timeout_tool, "-s", "KILL", f"{COMPILE_TIMEOUT_S:g}", *compile_argv]
        if program is not None:
            sent = {PROGRAM: program, JUDGE: judge}
            loader = interpreter(judge)
            # no shell: the loader runs the judge from a plain file and the judge makes the
            # program executable (two process starts fewer, a tenth of such a sample)
            argv = [loader, f"./{JUDGE}", f"./{PROGRAM}"] if loader is not None else [
                "/bin/sh", "-c", f"chmod 700 {JUDGE} && exec ./{JUDGE} ./{PROGRAM}\n"]
        else:
            script = (
                f"LC_ALL=C {shlex.join(compile_argv)} >{BUILD_LOG} 2>&1"
                f" || {{ echo $? >{BUILD_FAILED}; exit 0; }}\n"
                f"{report}"
                f"chmod 700 {JUDGE} && exec ./{JUDGE} ./{PROGRAM}\n"
            )
            sent = {**build_files, **layout.excerpt_files(), JUDGE: judge, **files}
            argv = ["/bin/sh", "-c", script]
        wall = wall_limit_s(limits, timeouts)
        per_record = OUTPUT_CAP_BYTES * 6 + 2 * 16384 + 8192
        output_bytes = max(limits.output_bytes, per_record * (len(tests) + 2))
        if key is not None and program is None:  # the program comes back too
            output_bytes = collect_output_bytes(output_bytes)
        run_limits = SandboxLimits(
            wall_s=wall,
            cpu_s=limits.cpu_s if limits.cpu_s is not None else wall,
            memory_mb=0 if limits.memory_mb <= 0 else max(limits.memory_mb, COMPILER_MEMORY_MB),
            output_bytes=output_bytes,
            file_size_mb=limits.file_size_mb,
            processes=max(limits.processes, MIN_PROCESSES),
        )
        if program is not None and self.builds is not None:  # in this thread's warm sandbox
            proc = self.builds.servers.run(sandbox, argv, files=sent, limits=run_limits,
                                    stdin=job.encode())
        else:
            proc = sandbox.run(argv, files=sent, limits=run_limits, stdin=job.encode(),
                               collect=(BUILD_LOG, BUILD_FAILED,
                                        *((PROGRAM,) if key is not None else ())))
        result = _Collector(self.name, layout, timeouts, proc, nonce).result()
        if program is not None:
            result.extra.pop("build_cpu_ms", None)
            result.extra["build"] = "cached"
        elif result.build_error is None and result.infra_error is None:
            result.extra["build"] = "compiled"
            if key is not None and self.builds is not None:
                first = proc.stdout.split(b"\n", 1)[0].decode("ascii", "replace")
                reported = first[:64] if first.endswith(f"  {PROGRAM}") else None
                self.builds.offer(key, proc.files.get(PROGRAM), reported)
        return result


class CLanguage(_CFamily):
    """C (GNU C11) compiled by gcc; test cases are statements using ``assert(...)``."""

    name = "c"
    fence_names = ("c", "h")
    file_extension = ".c"
    install_hint = "apt-get install gcc libc6-dev"
    compiler = "gcc"
    flags = (
        "-std=gnu11",
        "-O1",
        "-pipe",
        "-fdiagnostics-color=never",
        "-fmax-errors=20",
        "-Werror=implicit-function-declaration",
        "-Werror=implicit-int",
    )


class CppLanguage(_CFamily):
    """C++17 compiled by g++; test cases are statements using ``assert(...)``; they may throw."""

    name = "cpp"
    fence_names = ("cpp", "c++", "cc", "cxx", "hpp")

    def _zero(self, returns: str) -> str | None:
        simple = super()._zero(returns)
        if simple is not None or not returns.strip() or re.search(r"\bauto\b|&", returns):
            return simple
        return "return {};"
    file_extension = ".cpp"
    install_hint = "apt-get install g++ libc6-dev"
    compiler = "g++"
    cpp = True
    flags = ("-std=c++17", "-O1", "-pipe", "-fdiagnostics-color=never", "-fmax-errors=20")


# --------------------------------------------------------------------------- reading the results


def _clean_log(log: str) -> str:
    """The compiler's log without notes about benchwright's own headers."""
    kept: list[str] = []
    skipping = False
    for line in log.splitlines():
        if line.startswith("In file included from bw_tests_driver:"):
            continue
        if re.match(r"bw_(?:assert|driver)\.h:\d+:(?:\d+:)? note:", line):
            skipping = True
            continue
        if skipping and re.match(r"\s*\d*\s*\|", line):
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept).strip()


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\tn])", lambda m: {"\\": "\\", "t": "\t", "n": "\n"}[m.group(1)], text)


def _signal_name(sig: int) -> str:
    try:
        name = signal.strsignal(sig)
    except ValueError:
        name = None
    return name or f"signal {sig}"


class _Collector:
    def __init__(
        self, language: str, layout: _Layout, timeouts: list[float], proc: ProcessResult,
        nonce: str,
    ) -> None:
        self.language = language
        self.layout = layout
        self.tests = layout.tests
        self.timeouts = timeouts
        self.proc = proc
        self.prefix = f"BWR-{nonce} "
        self.infra: str | None = None

    def result(self) -> ExecutionResult:
        records = parse_lines(self.proc.stdout, prefix=self.prefix)
        if not records:
            return self._no_judge()
        refined = [self._refine(r) for r in records]
        result = collect(self.tests, refined, self.proc, self.layout.code)
        build_cpu = records[0].get("build_cpu_ms")
        if isinstance(build_cpu, int | float) and not isinstance(build_cpu, bool) and build_cpu >= 0:
            result.extra["build_cpu_ms"] = float(build_cpu)
        if self.infra is not None:
            return ExecutionResult(result.tests, result.process, infra_error=self.infra,
                                   extra=result.extra)
        return result

    # ---- before the judge

    def _no_judge(self) -> ExecutionResult:
        files = self.proc.files
        code: Callable[[int], str] = self.layout.code
        if BUILD_FAILED in files:
            log = files.get(BUILD_LOG, b"").decode("utf-8", "replace")
            status = files[BUILD_FAILED].decode("ascii", "replace").strip()
            if status in ("124", "137"):
                msg = f"the compiler did not finish within {COMPILE_TIMEOUT_S:g} s"
                return all_tests(self.tests, code, "timeout", msg, self.proc, build_error=msg)
            return self._build_failure(log)
        if self.proc.timed_out:
            msg = "the sample timed out before the tests started (compiling took too long)"
            return all_tests(self.tests, code, "timeout", msg, self.proc, build_error=msg)
        why = self.proc.stderr.decode("utf-8", "replace").strip()[-2000:]
        message = f"the {self.language} test judge did not start: {why or 'no message'}"
        outcomes = [
            TestOutcome(t.name, "not_run", f"not run: {message}", None, code(i), None)
            for i, t in enumerate(self.tests)
        ]
        return ExecutionResult(outcomes, self.proc, infra_error=message)

    def _build_failure(self, log: str) -> ExecutionResult:
        log = _TEMP_OBJECT.sub("bw_tests.o", log).replace("/usr/bin/ld: ", "ld: ").replace(
            "/usr/bin/ld.gold: ", "ld: ")
        log = _clean_log(log)
        errors = [(m.group("file"), int(m.group("line"))) for m in _COMPILE_ERROR.finditer(log)]
        links = [m.group("sym") for m in _LINK_ERROR.finditer(log)]
        killed = any(s in log for s in ("Killed signal", "out of memory", "memory exhausted",
                                        "internal compiler error", "File size limit"))
        if not errors and not links and "multiple definition" not in log and not killed:
            message = f"the compiler failed without a compile error: {log[-2000:] or 'no output'}"
            outcomes = [
                TestOutcome(t.name, "not_run", f"not run: {message}", None, self.layout.code(i),
                            None)
                for i, t in enumerate(self.tests)
            ]
            return ExecutionResult(outcomes, self.proc, infra_error=message)
        message = log if len(log) <= 16000 else log[:16000] + "\n..."
        outcomes = []
        for i, test in enumerate(self.tests):
            line = self._build_line(i, errors, links)
            outcomes.append(TestOutcome(test.name, "error", message, line, self.layout.code(i),
                                        None))
        return ExecutionResult(outcomes, self.proc, build_error=message)

    def _build_line(self, i: int, errors: list[tuple[str, int]], links: list[str]) -> int | None:
        for label, line in errors:
            mapped = self.layout.line_in(i, label, line)
            if mapped is not None:
                return mapped
        code_lines = self.layout.code(i).splitlines()
        offset = self.layout.test_offset
        for sym in links:
            pattern = re.compile(rf"\b{re.escape(sym.split('(')[0].split('::')[-1])}\b")
            # the test's own lines first (the call), then the solution's
            order = list(range(offset, len(code_lines))) + list(range(offset))
            for k in order:
                if pattern.search(code_lines[k]):
                    return k + 1
        return None

    # ---- the judge's records

    def _refine(self, rec: dict[str, Any]) -> dict[str, Any]:
        index = rec.get("i")
        if not isinstance(index, int) or not 0 <= index < len(self.tests):
            return rec
        out = dict(rec)
        status = rec.get("status")
        report = str(rec.get("report") or "")
        output = str(rec.get("output") or "")
        out["line"] = None
        out["message"] = None
        if status == "pass":
            return out
        if status == "timeout":
            out["message"] = f"timed out after {self.timeouts[index]:g} s"
            return out
        if isinstance(rec.get("infra"), str):
            out["message"] = rec["infra"]
            return out
        if report.startswith("A "):
            head, _, rest = report[2:].partition("\t")
            label, _, rest = rest.partition("\t")
            expr, _, detail = rest.rstrip("\n").partition("\t")
            expr, detail = _unescape(expr), _unescape(detail)
            out["status"] = "fail"
            out["line"] = self.layout.line_in(index, _unescape(label), int(head)) \
                if head.isdigit() else None
            out["message"] = f"assertion failed: {expr}" + (f": {detail}" if detail else "")
            return out
        if report.startswith("E "):
            type_name, _, what = report[2:].rstrip("\n").partition("\t")
            out["message"] = f"uncaught exception {_unescape(type_name)}" + (
                f": {_unescape(what)}" if what else "")
            return out
        if report.startswith("X "):
            self.infra = f"could not run the test program: {report[2:].strip()}"
            out["message"] = self.infra
            return out
        sig = rec.get("signal")
        code = rec.get("exit")
        if isinstance(sig, int):
            match = _GLIBC_ASSERT.search(output)
            if sig == signal.SIGABRT and match is not None:
                out["status"] = "fail"
                out["line"] = self.layout.line_in(index, match.group("file"),
                                                  int(match.group("line")))
                out["message"] = f"assertion failed: {match.group('expr')}"
                return out
            message = _signal_name(sig)
            if sig == signal.SIGABRT:
                tail = [ln.strip() for ln in output.strip().splitlines()[-2:] if ln.strip()]
                if tail:
                    message += ": " + " ".join(tail)[:500]
            out["message"] = message
            return out
        if isinstance(code, int):
            if report.startswith("OK "):
                out["message"] = (f"the test finished, then the process exited with code {code}"
                                  " (an atexit handler or a destructor)")
            else:
                out["message"] = (f"the test process exited with code {code} before the test "
                                  "finished (exit() during the test?)")
            return out
        out["message"] = "the test ended without a result"
        return out


# --------------------------------------------------------------------------- entry point


def _entry_point(code: str) -> str | None:
    """The function a test would call: the last top-level function defined that is neither
    ``main`` nor ``static`` (helpers come first in C), else the last one; else the first
    indented one (a method of a C++ class)."""
    stripped = _strip_comments(code)
    found: list[tuple[str, bool]] = []
    for m in _ENTRY.finditer(stripped):
        name = m.group("name")
        if name in _KEYWORDS:
            continue
        found.append((name, "static" in m.group("sig").split()))
    public = [name for name, is_static in found if not is_static]
    if public:
        return public[-1]
    if found:
        return found[-1][0]
    for m in re.finditer(
        r"^[ \t]+(?:[\w:<>,\*&]+[ \t\*&]+)+(?P<name>[A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?\{",
        stripped,
        re.M,
    ):
        if m.group("name") not in _KEYWORDS:
            return m.group("name")
    return None


def _strip_comments(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), code, flags=re.S)
    return re.sub(r"//[^\n]*", "", code)
