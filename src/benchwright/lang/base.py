"""The language interface: turn a solution and its test cases into per-test outcomes."""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from typing import Literal

from benchwright.lang.mutate import Mutant
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

TestStatus = Literal["pass", "fail", "error", "timeout", "not_run"]

LOAD_CHECK = "(load)"
"""The name of the empty test case :meth:`Language.load` runs to compile or load a solution."""


@dataclass(frozen=True)
class TestSpec:
    """One rendered test case to run."""

    __test__ = False

    name: str
    code: str
    hidden: bool = False
    timeout_s: float | None = None
    """This test case's own time limit; None: the ``test_timeout_s`` of the call."""
    unsplit: str | None = None
    """Why this case is a whole test program, not one check (see ``TestCase.unsplit``)."""
    stdin: str | None = None
    """A stdin/stdout case: the solution runs as a program on this input (``code`` is empty)."""
    expected_stdout: str | None = None
    """What a stdin/stdout case must print (see :func:`benchwright.lang.pyrunner.compare_output`)."""

    @property
    def is_stdio(self) -> bool:
        """Whether this case runs the solution as a program on ``stdin``."""
        return self.stdin is not None


@dataclass(frozen=True)
class TestOutcome:
    """The result of one test case."""

    __test__ = False

    name: str
    status: TestStatus
    message: str | None
    """Assertion message or exception text."""
    line: int | None
    """Line in ``code`` where it failed (1-based)."""
    code: str
    """The exact code executed for this test case (solution, prelude and test)."""
    time_ms: float | None
    output: str = ""
    judged: str | None = None
    """Where the verdict was decided: ``harness`` (from the values the solution returned) or
    ``sample`` (the whole test ran in the solution's process)."""
    suspicious: str | None = None
    """Why a pass looks forged (a value whose type differs from the expected value's, such
    as an object equal to everything); the verdict stands, the record is flagged."""


@dataclass(frozen=True)
class ExecutionResult:
    """Every test case of one sample, plus what the process used."""

    tests: list[TestOutcome]
    process: ProcessResult | None
    build_error: str | None = None
    """The solution did not compile or load: every test is ``error``."""
    infra_error: str | None = None
    """The harness or toolchain failed: not the model's fault."""
    unsupported: str | None = None
    """What the code needed that the sandbox cannot offer (``needs the npm package 'js-md5'``),
    set when the sample did not pass: the sample is ``infra_error``, never counted against the
    model, and its records say so (``details.unsupported``)."""
    needs: tuple[str, ...] = ()
    """The packages or crates behind ``unsupported``, by name."""
    extra: dict[str, object] = field(default_factory=dict)


class Language(abc.ABC):
    """A programming language benchwright can extract, inspect and execute.

    Registered under kind ``language``; the factory takes no arguments.
    """

    name: str = "?"
    fence_names: tuple[str, ...] = ()
    """Names that mark a fenced code block of this language (```python)."""
    file_extension: str = ".txt"
    install_hint: str = ""
    """How to install this language's toolchain (Debian packages), for errors and ``doctor``."""
    stdio_tests: bool = False
    """Whether :meth:`run_tests` runs stdin/stdout test cases (``TestSpec.stdin``): the solution
    as a program on each case's input, its output compared with the expected one. A language
    without them reports each such case as an error (and ``validate`` refuses the task)."""
    scaffolding: tuple[tuple[str, str], ...] = ()
    """(regex, what it is) of test-harness code a test case may hold that this language's runner
    never executes (``#[cfg(test)]`` in Rust: a test case is a function body); see :meth:`inert`."""

    @abc.abstractmethod
    def infer_entry_point(self, code: str) -> str | None:
        """The main function or method a test would call, guessed from a (golden) solution."""

    @abc.abstractmethod
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
        """Run every test case against ``solution`` in ``sandbox``; each is reported on its own.

        A failing or crashing solution is a value (statuses in the result), never an exception.

        Raises:
            InfraError: the toolchain is missing or the sandbox failed.
        """

    def load(
        self,
        sandbox: Sandbox,
        solution: str,
        *,
        prelude: str | None,
        limits: SandboxLimits,
        test_timeout_s: float,
    ) -> ExecutionResult:
        """Compile or load ``solution`` (and ``prelude``) without a test case: how a sample that
        no test case applies to is checked. The result has no tests; ``build_error`` says why the
        code did not compile, import or load (a crash or time-out while loading included).

        The default runs one empty test case (:data:`LOAD_CHECK`) through :meth:`run_tests`, which
        every built-in language accepts; a language whose empty test is not valid code overrides it.

        Raises:
            InfraError: the toolchain is missing or the sandbox failed.
        """
        result = self.run_tests(sandbox, solution, [TestSpec(name=LOAD_CHECK, code="")], prelude=prelude,
                                limits=limits, test_timeout_s=test_timeout_s)
        if result.infra_error or result.build_error:
            return ExecutionResult([], result.process, build_error=result.build_error,
                                   infra_error=result.infra_error, extra=result.extra)
        failed = next((t for t in result.tests if t.status != "pass"), None)
        why = None
        if failed is not None:
            why = failed.message or f"the solution did not load ({failed.status})"
        elif not result.tests:
            why = "the solution did not load (the runner reported nothing)"
        return ExecutionResult([], result.process, build_error=why, extra=result.extra)

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """Changed copies of ``solution`` that any useful test fails: the entry point returns
        its type's zero value (or None/null), or it fails at once (raises, panics, exits
        non-zero). ``validate --golden`` runs them against a task's tests. The default: none."""
        return []

    def program_mutants(self) -> list[Mutant]:
        """Programs that any useful stdin/stdout test fails (one that prints nothing, one that
        fails at once), for ``validate --golden`` on a task whose tests run the solution as a
        program. The default: none."""
        return []

    def inert(self, test_code: str) -> list[tuple[int, str]]:
        """Test-harness scaffolding in a test case that the runner will not execute: (line in
        ``test_code``, what it is) for each match of :attr:`scaffolding`, one per line."""
        found: dict[int, str] = {}
        for pattern, what in self.scaffolding:
            for m in re.finditer(pattern, test_code, flags=re.M):
                found.setdefault(test_code.count("\n", 0, m.start()) + 1, what)
        return sorted(found.items())

    def toolchain(self) -> dict[str, str]:
        """Versions of the tools this language uses, for ``run.yaml``."""
        return {}

    def missing(self) -> str | None:
        """What of this language's toolchain this machine lacks, with how to install it;
        None when everything is there. Cheap (looks for programs, runs nothing)."""
        return None

    def close(self) -> None:
        """Stop whatever this language keeps running between samples (batch servers)."""
        return None

    def extract_code(self, answer: str) -> str:
        """The code in a chat answer: the longest fenced block of this language, else any
        fenced block, else the whole answer."""
        blocks = re.findall(r"```([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", answer, flags=re.S)
        if not blocks:
            return answer.strip("\n") + "\n"
        mine = [b for tag, b in blocks if tag.lower() in self.fence_names]
        untagged = [b for tag, b in blocks if not tag]
        pool: list[str] = mine or untagged or [b for _, b in blocks]
        return str(max(pool, key=len)).strip("\n") + "\n"
