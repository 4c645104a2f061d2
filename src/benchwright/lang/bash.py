"""Bash: the solution is a script defining functions; each test case is a shell snippet.

How one sample runs
-------------------
The work folder gets ``solution.sh`` (verbatim), ``prelude.sh`` (when the task has one),
``bw_t/<i>.sh`` (test case ``i`` verbatim), ``bw_lib.sh`` (helpers, from ``bashlib.sh.tmpl``)
and ``bw_judge.sh`` (from ``bashjudge.sh.tmpl``). One sandbox call runs ``bash bw_judge.sh``;
it reads its job from stdin (a nonce, the output cap, the memory limit, each test's time
limit) and never sources the solution itself:

* ``bash -n solution.sh`` first: a syntax error is a build error (the model's fault) with
  the line bash names;
* then it reads the solution, the helpers, the prelude and every test file into its own
  memory, and per test case it forks a subshell, in a process group of its own (``set -m``),
  with stdin on /dev/null, stdout and stderr to a file, ``ulimit -v`` (``limits.memory_mb``) and
  ``ulimit -t``. The subshell sources (from the judge's copies, through here-strings on
  ``/dev/fd/5``, ``3``, ``6`` and ``7``) the solution, then the helpers of ``bw_lib.sh``
  (``assert_eq ACTUAL EXPECTED [MESSAGE]``, ``assert_ne``), the prelude, sets an ``ERR`` trap
  and sources the test, so the test's commands run at the top level with ``set -e`` semantics: the
  first failing top-level command of the test (not one inside the solution's functions)
  ends it as ``fail``, with its line and command (``assert_eq`` adds "expected 'x', got
  'y'"); status 126/127 (command not found) and a test file that does not parse are
  ``error``. After the test file returned the subshell writes ``ok <t0> <t1>`` to its report
  file and exits 0.
* a watchdog subshell (``read -t`` on a pipe nobody writes, so no process is started)
  SIGKILLs the test's process group when its time limit passes: ``timeout``, and the next
  test runs. The judge waits for the subshell, kills whatever it left in its group and
  decides: ``pass`` needs exit status 0 and the report's ``ok`` line; a signal is ``error``
  (its name), an exit before the report is ``error``.

The judge prints ``BWR-<nonce> {json}`` lines (:mod:`benchwright.lang.protocol`). Lines in a
``TestOutcome`` are lines of its ``code``: solution, prelude, then the test. ``cpu_ms`` is the
CPU time of all test subshells and what they ran (``times``, children); ``max_rss_bytes`` is
the sandbox's peak (the largest process of the tree: a test subshell or a program it ran).
No interpreter starts per test case: one ``bash -n``, one judge, a fork per test.

What a hostile solution can and cannot do
-----------------------------------------
Cannot make a failing test pass by generic means: ``exit 0`` (at load or inside a function),
``kill`` of its own subshell or group, a crash, printing ``BWR`` lines (they go to the
test's output file; lines written anywhere else lack the nonce), writing result files (the
judge's results go only to its stdout), or rewriting or removing the files of the work folder
(later tests run the judge's copies). The judge runs undumpable (``Sandbox.run(undumpable=True)``:
an execute-only copy of bash), and so are the subshells it forks: no process of the sample can
read the judge's memory (the nonce) or open ``/proc/<judge>/fd/1``, and the sandbox's PID 1 holds
no pipe to the harness.

Can still, in a solution written against this driver: (1) forge its own test's verdict,
because the test runs in the solution's shell: redefine the helpers or the trap, or write the
``ok`` report to fd 9 and ``exit 0``; (2) kill the judge (later tests become
``error``/``timeout``, never ``pass``) or leave a ``setsid`` daemon that outlives its test and
disturbs later ones of the same sample (it dies with the sandbox); (3) under the ``rlimit``
backend (no isolation) anything its uid can do: there ``kill $PPID`` kills the harness itself.
"""

from __future__ import annotations

import re
import secrets
import shutil
import signal
from dataclasses import dataclass
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec
from benchwright.lang.mutate import Body, Mutant, insert_in_body
from benchwright.lang.protocol import collect, parse_lines
from benchwright.lang.toolchain import tool_version
from benchwright.sandbox.base import Sandbox, SandboxLimits

__all__ = ["BashLanguage"]

INSTALL_HINT = "apt-get install bash"
BASH_PATHS = ("/usr/bin/bash", "/bin/bash")
START_ALLOWANCE_S = 5.0
PER_TEST_OVERHEAD_S = 0.5
OUTPUT_CAP = 4096
"""Characters of output kept per test."""
MIN_PROCESSES = 16
"""A test subshell, its watchdog, command substitutions and the programs a test runs."""

SOURCES = {"5": "solution", "6": "prelude", "7": "test"}
"""The descriptors the judge sources each part from (``/dev/fd/N``), read into its memory
before any test runs: what a solution does to the files of the work folder changes nothing of
what later tests run."""
_SYNTAX = re.compile(r"line (?P<line>\d+): (?P<what>syntax error.*)")
_FUNCTION = re.compile(
    r"^(?:function[ \t]+(?P<a>[A-Za-z_][\w:.-]*)[ \t]*(?:\([ \t]*\))?|"
    r"(?P<b>[A-Za-z_][\w:.-]*)[ \t]*\([ \t]*\))[ \t]*(?:\{|\(|$)",
    re.M,
)


def _resource(name: str) -> bytes:
    return resources.files("benchwright.lang").joinpath(name).read_bytes()


def _bash() -> str | None:
    for path in BASH_PATHS:
        if shutil.which(path) is not None:
            return path
    return None


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\n])", lambda m: "\n" if m.group(1) == "n" else "\\", text)


def _signal_name(sig: int) -> str:
    try:
        name = signal.strsignal(sig)
    except ValueError:
        name = None
    return name or f"signal {sig}"


class BashLanguage(Language):
    """Bash 5: functions in a script; test cases are shell snippets run with ``set -e``
    semantics (see the module's doc)."""

    name = "bash"
    fence_names = ("bash", "sh", "shell")
    file_extension = ".sh"
    install_hint = INSTALL_HINT

    def infer_entry_point(self, code: str) -> str | None:
        names = [m.group("a") or m.group("b") for m in _FUNCTION.finditer(code)]
        public = [n for n in names if not n.startswith("_") and n != "main"]
        if public:
            return public[-1]
        return names[-1] if names else None

    scaffolding = (
        (r"^\s*@test\s", "a bats `@test` block (no bats runs here: a test case is shell commands)"),
    )

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The function's body (``name() {`` or ``function name {``) starts with ``return 0``
        (prints nothing, succeeds) or ``return 1``."""
        name = re.escape(entry_point)
        m = re.search(rf"^[ \t]*(?:function[ \t]+{name}[ \t]*(?:\([ \t]*\))?|{name}[ \t]*\([ \t]*\))"
                      r"\s*\{", solution, flags=re.M)
        if m is None:
            return []
        body = Body(m.end() - 1, "", "")
        return [Mutant("prints nothing and returns 0", insert_in_body(solution, body, "return 0;")),
                Mutant("returns 1", insert_in_body(solution, body, "return 1;"))]

    def toolchain(self) -> dict[str, str]:
        bash = _bash()
        if bash is None:
            raise InfraError(f"bash is not installed ({INSTALL_HINT})")
        return {"bash": tool_version((bash, "-c", 'printf %s "$BASH_VERSION"'), hint=INSTALL_HINT)}

    def missing(self) -> str | None:
        if _bash() is None:
            return f"bash is not installed (neither /usr/bin/bash nor /bin/bash): {INSTALL_HINT}"
        return None

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
        bash = _bash()
        if bash is None:
            raise InfraError(f"bash: not installed on this machine (`{INSTALL_HINT}`)")
        if not tests:
            return ExecutionResult([], None)
        solution = _with_newline(solution) if solution else ""
        prelude_text = _with_newline(prelude) if prelude else ""
        offset = solution.count("\n") + prelude_text.count("\n")

        def code(i: int) -> str:
            return solution + prelude_text + _with_newline(tests[i].code)

        timeouts = [t.timeout_s if t.timeout_s is not None else test_timeout_s for t in tests]
        nonce = secrets.token_hex(16)
        memory_kb = max(0, limits.memory_mb) * 1024
        job = (
            f"{nonce}\n{len(tests)} {OUTPUT_CAP} {memory_kb} {1 if prelude_text else 0}\n"
            + " ".join(f"{t:.3f}" for t in timeouts) + "\n"
            + " ".join(str(max(1, round(t * 1000))) for t in timeouts) + "\n"
        )
        files = {
            "solution.sh": solution.encode(),
            "bw_judge.sh": _resource("bashjudge.sh.tmpl"),
            "bw_lib.sh": _resource("bashlib.sh.tmpl"),
            "bw_t/.keep": b"",
        }
        if prelude_text:
            files["prelude.sh"] = prelude_text.encode()
        for i, test in enumerate(tests):
            files[f"bw_t/{i}.sh"] = _with_newline(test.code).encode()
        wall = max(limits.wall_s,
                   START_ALLOWANCE_S + sum(t + PER_TEST_OVERHEAD_S for t in timeouts))
        run_limits = SandboxLimits(
            wall_s=wall,
            cpu_s=limits.cpu_s if limits.cpu_s is not None else wall,
            memory_mb=limits.memory_mb,
            output_bytes=max(limits.output_bytes, (OUTPUT_CAP * 6 + 40000) * (len(tests) + 2)),
            file_size_mb=limits.file_size_mb,
            processes=max(limits.processes, MIN_PROCESSES),
        )
        # undumpable: the judge holds the nonce and the harness's pipe; the test subshells it
        # forks (and what they run) can then neither read its memory nor open /proc/<judge>/fd
        proc = sandbox.run([bash, "bw_judge.sh"], files=files, limits=run_limits,
                           stdin=job.encode(), undumpable=True)
        records = parse_lines(proc.stdout, prefix=f"BWR-{nonce} ")
        if not records and not proc.timed_out:
            why = proc.stderr.decode("utf-8", "replace").strip()[-2000:]
            message = f"the bash test judge did not start: {why or 'no message'}"
            outcomes = [TestOutcome(t.name, "not_run", f"not run: {message}", None, code(i), None)
                        for i, t in enumerate(tests)]
            return ExecutionResult(outcomes, proc, infra_error=message)
        layout = _Layout(solution.count("\n"), offset, [code(i) for i in range(len(tests))])
        refined = [layout.refine(r, timeouts) for r in records]
        result = collect(tests, refined, proc, code)
        if not result.extra.get("max_rss_bytes"):
            result.extra.pop("max_rss_bytes", None)  # no test got as far as measuring
        return result


@dataclass(frozen=True)
class _Layout:
    """Where the parts sit in the code shown per test (solution, prelude, test)."""

    solution_lines: int
    offset: int
    """Lines before a test's first line."""
    codes: list[str]

    def clamp(self, index: int, line: int) -> int:
        return max(1, min(line, self.codes[index].count("\n")))

    def text(self, index: int, line: int | None) -> str:
        lines = self.codes[index].splitlines()
        return lines[line - 1].strip() if line is not None and 0 < line <= len(lines) else ""

    def paths(self, index: int, text: str) -> str:
        """Bash's ``/dev/fd/7: line 2`` (a test sourced by the judge, see :data:`SOURCES`) or
        ``/work/bw_t/3.sh: line 2`` in output -> ``line N`` of the shown code."""
        def sub(m: re.Match[str]) -> str:
            n = int(m.group("line"))
            part = SOURCES.get(m.group("fd") or "", m.group("file"))
            if part == "prelude":
                n += self.solution_lines
            elif part != "solution":
                n += self.offset
            return f"line {self.clamp(index, n)}"

        return re.sub(r"(?:/dev/fd/(?P<fd>[567])|\S*/(?P<file>solution|prelude|bw_t/\d+)\.sh): "
                      r"line (?P<line>\d+)", sub, text)

    def refine(self, rec: dict[str, Any], timeouts: list[float]) -> dict[str, Any]:
        """Message and line of one judge record (the verdict stays the judge's, except that
        a ``fail`` may become an ``error``)."""
        if "build" in rec:
            if rec.get("build") == "ok":
                return rec
            message = str(rec.get("message") or "the solution does not parse").strip()
            message = re.sub(r"\S*/solution\.sh:", "solution.sh:", message)
            m = _SYNTAX.search(message)
            return {**rec, "message": message, "line": int(m.group("line")) if m else None}
        index = rec.get("i")
        if not isinstance(index, int) or not 0 <= index < len(self.codes):
            return rec
        out = dict(rec)
        out["line"] = None
        out["message"] = None
        status = rec.get("status")
        report = str(rec.get("report") or "")
        output = self.paths(index, str(rec.get("output") or ""))
        out["output"] = output
        st = rec.get("exit") if isinstance(rec.get("exit"), int) else None
        if status == "pass":
            return out
        if status == "timeout":
            out["message"] = f"timed out after {timeouts[index]:g} s"
            return out
        if report.startswith("fail "):
            head, _, command = report.partition("\n")
            parts = head.split()
            code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
            line = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
            out["line"] = self.clamp(index, self.offset + line) if line is not None else None
            source = self.text(index, out["line"]) or command.strip()
            notes = [ln for ln in str(rec.get("assert_message") or "").splitlines() if ln]
            if code in (126, 127):
                out["status"] = "error"
                what = "command not found" if code == 127 else "command not executable"
                out["message"] = f"{what} (exit status {code}): {source}"
            elif notes and re.match(r"(?:.*[;&|(]\s*)?assert_(?:eq|ne)\b", source):
                out["message"] = _unescape(notes[-1])
            else:
                out["message"] = f"test command failed (exit status {code}): {source}"
                if notes:  # an assert_eq inside a helper the test called
                    out["message"] += f" ({_unescape(notes[-1])})"
            return out
        if report.startswith("ret "):
            m = _SYNTAX.search(str(rec.get("output") or ""))
            if m is not None:
                out["status"] = "error"
                out["line"] = self.clamp(index, self.offset + int(m.group("line")))
                out["message"] = m.group("what").strip()
            else:
                out["message"] = f"the test returned status {report[4:].strip()}"
            return out
        if st is not None and st > 128:
            out["message"] = f"the test process was killed: {_signal_name(st - 128)}"
            return out
        if report.startswith("ok "):
            out["message"] = f"the test finished, then its process exited with status {st}"
        else:
            out["message"] = (f"the test process exited with status {st} before the test "
                              "finished (exit in the solution?)")
        return out
