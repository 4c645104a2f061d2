"""Python: solutions and test cases run by ``pyrunner`` in the sandbox, never in the harness.

Each executor thread has a fork server (:mod:`.pyserver`): one sandbox and one interpreter
for a batch of samples, a fresh forked process per sample. A sandbox without long-lived
sessions gets a fresh interpreter per sample instead (``pyrunner.py`` reading one job).
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import sys
from functools import lru_cache

from benchwright.errors import InfraError
from benchwright.lang import pyrunner
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec
from benchwright.lang.mutate import Mutant
from benchwright.lang.protocol import PREFIX, collect, parse_lines
from benchwright.lang.pyserver import BOOT, ServerPool, boot_input
from benchwright.lang.toolchain import tool_version
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.isolated import SYSTEM_PYTHON
from benchwright.sandbox.wallcap import sample_cap_s

SETUP_ALLOWANCE_S = 5.0
SERVER_MARGIN_S = 5.0
"""How much longer than a sample's own limits the harness waits for the fork server."""
NOFILE = 256


def _setup(solution: str, prelude: str | None) -> str:
    setup = solution if solution.endswith("\n") else solution + "\n"
    if prelude:
        setup += prelude if prelude.endswith("\n") else prelude + "\n"
    return setup


class PythonLanguage(Language):
    """Python 3: each sample in a fresh process forked in the sandbox; every test case on its own."""

    name = "python"
    fence_names = ("python", "py", "python3")
    file_extension = ".py"
    stdio_tests = True

    def __init__(self, interpreter: str | None = None, fork_server: bool = True) -> None:
        self.fork_server = fork_server
        """Run samples through a fork server per executor thread (see :mod:`.pyserver`) where
        the sandbox offers long-lived sessions; False: a fresh interpreter per sample."""
        self._servers = ServerPool()
        self.interpreter = interpreter
        """The interpreter to run inside the sandbox; None: the one the sandbox offers
        (``Sandbox.python``: the harness's own for rlimit, ``/usr/bin/python3`` where home
        folders and virtualenvs are invisible)."""

    def infer_entry_point(self, code: str) -> str | None:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            m = re.search(r"^def\s+([A-Za-z_]\w*)", code, flags=re.M)
            return m.group(1) if m else None
        names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        public = [n for n in names if not n.startswith("_")]
        chosen = public or names
        return chosen[0] if chosen else None

    install_hint = "apt-get install python3"

    scaffolding = (
        (r"^\s*if\s+__name__\s*==\s*['\"]__main__['\"]\s*:",
         "an `if __name__ == \"__main__\":` block (a test case runs as module `solution`: it never runs)"),
        (r"\bunittest\.main\s*\(", "`unittest.main()` (unittest test cases are not run: write asserts)"),
        (r"^\s*class\s+\w+\s*\(\s*(?:unittest\.)?TestCase\s*\)",
         "a unittest TestCase class (its methods are never called: write asserts)"),
    )

    def inert(self, test_code: str) -> list[tuple[int, str]]:
        """Also a ``def test_...`` (or ``check``) function the test case never calls."""
        found = dict(super().inert(test_code))
        for m in re.finditer(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*|check)[ \t]*\(", test_code, flags=re.M):
            if len(re.findall(rf"\b{m.group(1)}\b", test_code)) == 1:
                found.setdefault(test_code.count("\n", 0, m.start()) + 1,
                                 f"function {m.group(1)}() is defined and never called")
        return sorted(found.items())

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The entry point redefined after the solution: returning None, raising at once. Only
        for a top-level function or class (a method cannot be redefined so simply)."""
        name = re.escape(entry_point)
        if not re.search(rf"^(?:async\s+def|def|class)\s+{name}\b", solution, flags=re.M):
            return []
        base = solution.rstrip("\n") + "\n\n\n"
        return [
            Mutant("returns None", f"{base}def {entry_point}(*args, **kwargs):\n    return None\n"),
            Mutant("raises", f"{base}def {entry_point}(*args, **kwargs):\n"
                             "    raise RuntimeError('benchwright mutant')\n"),
        ]

    def program_mutants(self) -> list[Mutant]:
        return [Mutant("prints nothing", "pass\n"),
                Mutant("raises", "raise RuntimeError('benchwright mutant')\n")]

    def toolchain(self) -> dict[str, str]:
        """The interpreter samples run on: the system one that the isolating sandboxes show
        (the harness's own only under the rlimit fallback)."""
        return {"python": _version(self.interpreter or SYSTEM_PYTHON)}

    def missing(self) -> str | None:
        python = self.interpreter or SYSTEM_PYTHON
        if os.access(python, os.X_OK):
            return None
        return f"{python} not found: the isolating sandboxes run Python code with it (`{self.install_hint}`)"

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
        programs = [t for t in tests if t.is_stdio]
        if programs and len(programs) < len(tests):  # two ways to run the solution: two samples
            groups = [[i for i, t in enumerate(tests) if not t.is_stdio],
                      [i for i, t in enumerate(tests) if t.is_stdio]]
            return _merged(len(tests), groups, [
                self.run_tests(sandbox, solution, [tests[i] for i in group], prelude=prelude,
                               limits=limits, test_timeout_s=test_timeout_s) for group in groups])
        setup = _setup(solution, prelude)
        job: dict[str, object] = {
            "setup": setup,
            "tests": [_job_test(t, test_timeout_s) for t in tests],
            "test_timeout_s": test_timeout_s,
            "output_cap": 4096,
        }
        wall = SETUP_ALLOWANCE_S + test_timeout_s + sum((t.timeout_s or test_timeout_s) + 1
                                                        for t in tests)
        cap = sample_cap_s(sandbox)  # limits.sample_timeout_s
        if cap is not None:
            wall = min(wall, cap)
        server = self._servers.get(sandbox, limits, self.interpreter) if self.fork_server else None
        if server is not None:
            job["limits"] = {"as": limits.memory_mb * 1024 * 1024 if limits.memory_mb > 0 else -1,
                             "fsize": limits.file_size_mb * 1024 * 1024, "core": 0,
                             "nofile": NOFILE}
            records, proc = server.run(job, wall if cap is not None else wall + SERVER_MARGIN_S)
            infra = next((r["infra"] for r in records if "infra" in r), None)
            if infra is not None:
                raise InfraError(f"the Python fork server failed: {infra}")
            return collect(tests, records, proc, lambda i: _code(setup, tests[i]))
        run_limits = SandboxLimits(
            wall_s=wall,
            cpu_s=wall,
            memory_mb=limits.memory_mb,
            output_bytes=max(limits.output_bytes, 256 * 1024 * (len(tests) + 2)),
            file_size_mb=limits.file_size_mb,
            processes=limits.processes,
        )
        nonce = secrets.token_hex(16)
        proc = sandbox.run(
            [self.interpreter or sandbox.python, "-I", "-S", "-c", BOOT],
            files={},
            limits=run_limits,
            stdin=boot_input(json.dumps({**job, "nonce": nonce}).encode()),
        )
        records = parse_lines(proc.stdout, prefix=f"{PREFIX}{nonce} ")
        if not records and not proc.timed_out:
            stderr = proc.stderr.decode("utf-8", "replace")
            if "Traceback" in stderr and "bw_runner.py" in stderr:
                raise InfraError(f"the Python runner failed: {stderr[-2000:]}")
        return collect(tests, records, proc, lambda i: _code(setup, tests[i]))

    def close(self) -> None:
        self._servers.close()


def _job_test(test: TestSpec, test_timeout_s: float) -> dict[str, object]:
    """One test case as the runner reads it: its code (and the check the judge makes of it), or
    for a stdin/stdout case its input and expected output (which only the judge holds)."""
    timeout = test.timeout_s or test_timeout_s
    if test.is_stdio:
        return {"code": "", "timeout": timeout, "stdin": test.stdin,
                "stdout": test.expected_stdout or ""}
    return {"code": test.code, "timeout": timeout, "check": _check_spec(test.code)}


def _merged(count: int, groups: list[list[int]], parts: list[ExecutionResult]) -> ExecutionResult:
    """The results of a task whose code cases and stdin/stdout cases ran as two samples (part
    ``k`` ran the tests at the indexes ``groups[k]``), in the tests' order; the process figures
    of the two added up (peak memory: the larger)."""
    slots: list[TestOutcome | None] = [None] * count
    for group, part in zip(groups, parts, strict=True):
        for i, outcome in zip(group, part.tests, strict=False):
            slots[i] = outcome
    extra: dict[str, object] = {}
    for part in parts:
        for key, value in part.extra.items():
            if key == "cpu_ms" and isinstance(value, (int, float)):
                extra[key] = float(extra.get(key, 0.0)) + value  # type: ignore[arg-type]
            elif key == "max_rss_bytes" and isinstance(value, int):
                extra[key] = max(int(extra.get(key, 0)), value)  # type: ignore[call-overload]
            else:
                extra.setdefault(key, value)
    return ExecutionResult(
        [o for o in slots if o is not None], parts[-1].process,
        build_error=next((p.build_error for p in parts if p.build_error), None),
        infra_error=next((p.infra_error for p in parts if p.infra_error), None), extra=extra)


@lru_cache(maxsize=1 << 16)
def _check_spec(code: str) -> dict[str, object] | None:
    """Whether (and how) the judge compares test ``code`` itself; worked out once per test
    case in the harness, not once per sample in the sandbox."""
    return pyrunner.check_spec(code)


def _version(python: str) -> str:
    try:
        return tool_version((python, "-I", "-S", "-c", "import sys; print(sys.version.split()[0])"),
                            hint=PythonLanguage.install_hint)
    except InfraError:
        return f"harness {sys.version.split()[0]} ({python} not runnable)"


def _code(setup: str, test: TestSpec) -> str:
    """What ran for ``test``: the setup then its code; for a stdin/stdout case, the program."""
    if test.is_stdio:
        return setup
    return setup + (test.code if test.code.endswith("\n") else test.code + "\n")
