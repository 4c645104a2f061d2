"""Python: solutions and test cases run by ``pyrunner`` in a fresh interpreter in the sandbox."""

from __future__ import annotations

import ast
import json
import re
import sys
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec, TestStatus
from benchwright.sandbox.base import Sandbox, SandboxLimits

_RUNNER = resources.files("benchwright.lang").joinpath("pyrunner.py").read_bytes()
SETUP_ALLOWANCE_S = 5.0
PREFIX = "BWR "


def _setup(solution: str, prelude: str | None) -> str:
    setup = solution if solution.endswith("\n") else solution + "\n"
    if prelude:
        setup += prelude if prelude.endswith("\n") else prelude + "\n"
    return setup


class PythonLanguage(Language):
    """Python 3: each sample in a fresh ``python -I -S`` process; every test case on its own."""

    name = "python"
    fence_names = ("python", "py", "python3")
    file_extension = ".py"

    def __init__(self, interpreter: str | None = None) -> None:
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

    def toolchain(self) -> dict[str, str]:
        return {"python": sys.version.split()[0]}

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
        setup = _setup(solution, prelude)
        job = {
            "setup": setup,
            "tests": [t.code for t in tests],
            "test_timeout_s": test_timeout_s,
            "output_cap": 4096,
        }
        wall = SETUP_ALLOWANCE_S + (test_timeout_s + 1) * (len(tests) + 1)
        run_limits = SandboxLimits(
            wall_s=wall,
            cpu_s=wall,
            memory_mb=limits.memory_mb,
            output_bytes=max(limits.output_bytes, 256 * 1024 * (len(tests) + 2)),
            file_size_mb=limits.file_size_mb,
            processes=limits.processes,
        )
        proc = sandbox.run(
            [self.interpreter or sandbox.python, "-I", "-S", "bw_runner.py"],
            files={"bw_runner.py": _RUNNER},
            limits=run_limits,
            stdin=json.dumps(job).encode(),
        )
        records: list[dict[str, Any]] = []
        for raw in proc.stdout.decode("utf-8", "replace").splitlines():
            if not raw.startswith(PREFIX):
                continue
            try:
                records.append(json.loads(raw[len(PREFIX):]))
            except json.JSONDecodeError:
                break  # cut by a kill; what follows is unknown
        if not records:
            stderr = proc.stderr.decode("utf-8", "replace")
            if proc.timed_out:
                return self._all(tests, setup, "timeout", "the process timed out before any test ran",
                                 proc, build_error="timeout while loading the solution")
            if "Traceback" in stderr and "bw_runner.py" in stderr:
                raise InfraError(f"the Python runner failed: {stderr[-2000:]}")
            why = f"the process ended before reporting (exit {proc.exit_code}, signal {proc.signal})"
            return self._all(tests, setup, "error", why, proc, build_error=why)
        head = records[0]
        if head.get("build") != "ok":
            build_status: TestStatus = "timeout" if head.get("build") == "timeout" else "error"
            msg = str(head.get("message"))
            return self._all(tests, setup, build_status, msg, proc, build_error=msg, line=head.get("line"),
                             output=head.get("output") or "")
        load_output = head.get("output") or ""
        by_index = {r["i"]: r for r in records[1:] if "i" in r}
        outcomes: list[TestOutcome] = []
        for i, t in enumerate(tests):
            code = setup + (t.code if t.code.endswith("\n") else t.code + "\n")
            r = by_index.get(i)
            if r is None:
                missing: TestStatus = "timeout" if proc.timed_out else "error"
                msg = ("the process timed out" if proc.timed_out else
                       f"the process ended before this test reported (exit {proc.exit_code}, "
                       f"signal {proc.signal})")
                outcomes.append(TestOutcome(t.name, missing, msg, None, code, None))
                continue
            outcomes.append(TestOutcome(
                name=t.name, status=r["status"], message=r.get("message"), line=r.get("line"),
                code=code, time_ms=r.get("time_ms"),
                output=(load_output if i == 0 else "") + (r.get("output") or ""),
                judged=r.get("judged"),
            ))
        done = next((r for r in records if r.get("done")), None)
        extra: dict[str, object] = {}
        if done is not None:
            for key in ("cpu_ms", "max_rss_bytes"):
                if isinstance(done.get(key), (int, float)):
                    extra[key] = done[key]
        return ExecutionResult(outcomes, proc, extra=extra)

    @staticmethod
    def _all(
        tests: list[TestSpec], setup: str, status: TestStatus, message: str, proc: Any,
        build_error: str, line: int | None = None, output: str = "",
    ) -> ExecutionResult:
        outcomes = [
            TestOutcome(t.name, status, message, line, setup + t.code + "\n", None,
                        output=output if i == 0 else "")
            for i, t in enumerate(tests)
        ]
        return ExecutionResult(outcomes, proc, build_error=build_error)
