"""The criterion interface: which samples it applies to, and the measurements it makes."""

from __future__ import annotations

import abc
import dataclasses
import re
import time
from dataclasses import dataclass, field
from typing import Any

from benchwright.config.model import Limits
from benchwright.config.settings import Settings
from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestOutcome
from benchwright.model.judge import Judge
from benchwright.results.record import Generation, Verdict
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.wallcap import WallCap, wall_capped
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

__all__ = ["Criterion", "Measurement", "SampleContext", "WallCap", "ceiling_s", "execute_tests",
           "wall_capped", "with_header"]


@dataclass
class Measurement:
    """What a criterion says about a sample; the engine adds who, what and where."""

    score: float | None
    unit: str | None = None
    verdict: Verdict | None = None
    required: bool | None = None
    output: str | None = None
    error: str | None = None
    time_ms: float | None = None
    test_case: str | None = None
    code: str | None = None
    status: str | None = None
    line: int | None = None
    hidden: bool | None = None
    details: dict[str, Any] | None = None


@dataclass
class SampleContext:
    """Everything a criterion may look at for one sample. Execution happens once, on demand."""

    task: Task
    language: str
    rendered: RenderedTask
    generation: Generation
    code: str
    lang: Language | None
    sandbox: Sandbox
    limits: Limits
    judge: Judge | None = None
    """The config's ``llm-judge`` model, when it names one and a judge criterion runs."""
    memo: dict[str, Any] = field(default_factory=dict, repr=False)
    """What one criterion worked out that another of the same sample may reuse (the judge's answer)."""
    settings: Settings | None = None
    """The workspace's settings (``benchwright.yaml``), for criteria configured there."""
    cpu_start_s: float = field(default_factory=time.thread_time, repr=False)
    """The evaluating thread's CPU time when the sample's evaluation began (``energy``)."""
    _execution: ExecutionResult | None = field(default=None, repr=False)
    _wall_s: float | None = field(default=None, repr=False)

    @property
    def executed(self) -> ExecutionResult | None:
        """The execution result if some criterion ran the tests, else None."""
        return self._execution

    def test_timeout_s(self) -> float:
        """The ceiling of every test's time limit: the task's ``time_limit_s``, else the config's."""
        return ceiling_s(self.task, self.limits)

    def execution(self) -> ExecutionResult:
        """Run the sample's tests (once) and return every test case's outcome. With no test
        case, the solution is only compiled or loaded (:meth:`Language.load`); with no test case
        and no language plug-in, nothing runs (an empty result).

        Raises:
            InfraError: no runner for the language, or the sandbox/toolchain failed.
        """
        if self._execution is None:
            if self.lang is None and not self.rendered.tests:  # nothing to run, nothing to load with
                self._execution = ExecutionResult([], None)
                return self._execution
            if self.lang is None:
                raise InfraError(f"benchwright cannot execute {self.language} code (no language plug-in)")
            self._execution, self._wall_s = execute_tests(
                self.lang, self.sandbox, self.code, self.rendered, self.limits, self.test_timeout_s())
            self._execution = task_needs(self._execution, self.task, self.language, self.rendered)
            if self._execution.infra_error:
                raise InfraError(self._execution.infra_error)
        return self._execution

    def limit_of(self, test: TestOutcome) -> tuple[str, float] | None:
        """For a test that timed out: which limit struck it (``test`` or ``sample``) and its seconds."""
        if test.status != "timeout" or self._execution is None:
            return None
        proc = self._execution.process
        if proc is not None and proc.timed_out and test.time_ms is None and self._wall_s is not None:
            return "sample", self._wall_s
        spec = next((t for t in self.rendered.tests if t.name == test.name), None)
        own = spec.timeout_s if spec is not None else None
        return "test", own if own is not None else self.test_timeout_s()


def ceiling_s(task: Task, limits: Limits) -> float:
    """The most a test case of ``task`` may take: its ``time_limit_s``, else ``test_timeout_s``."""
    return task.time_limit_s or limits.test_timeout_s


def with_header(header: str | None, code: str) -> str:
    """``code`` with a task's ``solution_header`` before it (the code that runs and is shown)."""
    if not header:
        return code
    return header + ("" if header.endswith("\n") else "\n") + code


def task_needs(result: ExecutionResult, task: Task, language: str,
               rendered: RenderedTask) -> ExecutionResult:
    """``result``, whose ``unsupported`` stands only when the task itself needs what the sandbox
    lacks (its golden solution, tests or prelude name the package or crate). A package only the
    sample wants is the sample's own error: a model must not leave the counts by requiring a
    package nobody has."""
    if result.unsupported is None or not result.needs:
        return result
    texts = [task.golden_solution.get(language) or "", rendered.prelude or "",
             rendered.header or "", *(t.code for t in rendered.tests)]
    if any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
           for name in result.needs for text in texts):
        return result
    why = f"{result.unsupported}; the task does not need it, so this is the sample's own error"
    tests = [t if t.status == "pass" else dataclasses.replace(
                 t, message=f"{t.message}\n({why})" if t.message else why) for t in result.tests]
    return dataclasses.replace(result, unsupported=None, tests=tests,
                               build_error=f"{result.build_error}\n({why})" if result.build_error
                               else result.build_error)


def execute_tests(lang: Language, sandbox: Sandbox, code: str, rendered: RenderedTask, limits: Limits,
                  ceiling: float) -> tuple[ExecutionResult, float | None]:
    """Run ``rendered``'s tests against ``code`` as every sample runs: each test with its own
    ``timeout_s`` (None: ``ceiling``); the whole execution gets the wall limit the language
    derives from those, at most ``limits.sample_timeout_s`` when that is set (pass a sandbox
    made by :func:`wall_capped` to keep one across samples). Returns the result and the wall
    limit the sample got, when known.

    The call's ``test_timeout_s`` is the ceiling: what a test without a limit of its own gets,
    and what loading the solution may take. With no test case, the solution is only compiled
    or loaded (:meth:`Language.load`): the result has no tests, and ``build_error`` when it failed.

    Raises:
        InfraError: the toolchain or the sandbox failed.
    """
    sandbox = wall_capped(sandbox, limits.sample_timeout_s)
    if isinstance(sandbox, WallCap):
        sandbox.forget()
    box = SandboxLimits(wall_s=ceiling, memory_mb=limits.memory_mb, output_bytes=limits.output_bytes)
    code = with_header(rendered.header, code)
    tests = rendered.tests
    refused = [t for t in tests if t.is_stdio] if not lang.stdio_tests else []
    runnable = [t for t in tests if t not in refused]
    if runnable:
        result = lang.run_tests(sandbox, code, runnable, prelude=rendered.prelude, limits=box,
                                test_timeout_s=ceiling)
    else:  # no test case applies: compile or load the solution all the same
        result = lang.load(sandbox, code, prelude=rendered.prelude, limits=box, test_timeout_s=ceiling)
    if refused:  # stdin/stdout cases a language cannot run: errors, never skipped in silence
        why = (f"{lang.name} cannot run stdin/stdout test cases (benchwright runs them in Python "
               "only); 'benchwright validate' refuses such a task")
        ran = {t.name: t for t in result.tests}
        outcomes = [ran.get(t.name) or TestOutcome(t.name, "error", why, None, code, None)
                    for t in tests]
        result = dataclasses.replace(result, tests=[o for o in outcomes if o is not None])
    wall = sandbox.last_wall_s() if isinstance(sandbox, WallCap) else None
    if wall is None:
        reported = result.extra.get("wall_limit_s")  # the Java runner says what it asked for
        wall = float(reported) if isinstance(reported, int | float) else None
    return result, wall


class Criterion(abc.ABC):
    """A plug-in that evaluates samples. Registered under kind ``criterion``; no-argument factory."""

    name: str = "?"
    unit: str = ""
    higher_is_better: bool = True
    executes: bool = False
    """Whether it needs the sample's tests to run (and so a language plug-in)."""
    languages: tuple[str, ...] = ()
    """The languages it measures (empty: any)."""
    tool: str = "benchwright"
    """What does the measuring: a program or library, or benchwright itself."""
    needs_judge: bool = False
    """Whether it asks the config's ``llm-judge`` model (``SampleContext.judge``)."""
    evaluated_last: bool = False
    """Whether it runs after the sample's other criteria (it measures what they did)."""

    def missing(self) -> str | None:
        """Why this criterion cannot run on this machine (its tool is not installed), with how
        to install it; None when it can."""
        return None

    def unconfigured(self, settings: Settings) -> str | None:
        """Why, with the workspace's ``settings``, every sample would record n/a (a server the
        settings do not name), with the fix; None when configured. ``validate`` and ``run`` warn."""
        return None

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        """Whether this criterion has anything to say about ``task`` in ``language``."""
        return True

    def close(self) -> None:
        """Stop whatever this criterion keeps running between samples (a warm tool)."""
        return None

    @abc.abstractmethod
    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        """Measure one sample. The summary uses the measurement whose ``test_case`` is None.

        Raises:
            InfraError: the harness failed (the sample becomes ``infra_error``).
        """
