"""Python: solutions and test cases run by ``pyrunner`` in a fresh interpreter in the sandbox."""

from __future__ import annotations

import ast
import json
import re
import sys
from importlib import resources

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestSpec
from benchwright.lang.protocol import collect, parse_lines
from benchwright.sandbox.base import Sandbox, SandboxLimits

_RUNNER = resources.files("benchwright.lang").joinpath("pyrunner.py").read_bytes()
SETUP_ALLOWANCE_S = 5.0


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
        records = parse_lines(proc.stdout)
        if not records and not proc.timed_out:
            stderr = proc.stderr.decode("utf-8", "replace")
            if "Traceback" in stderr and "bw_runner.py" in stderr:
                raise InfraError(f"the Python runner failed: {stderr[-2000:]}")
        return collect(tests, records, proc, lambda i: _code(setup, tests[i]))


def _code(setup: str, test: TestSpec) -> str:
    return setup + (test.code if test.code.endswith("\n") else test.code + "\n")
