"""The criterion interface: which samples it applies to, and the measurements it makes."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from benchwright.config.model import Limits
from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language
from benchwright.results.record import Generation, Verdict
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask


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
    _execution: ExecutionResult | None = field(default=None, repr=False)

    @property
    def executed(self) -> ExecutionResult | None:
        """The execution result if some criterion ran the tests, else None."""
        return self._execution

    def test_timeout_s(self) -> float:
        return self.task.time_limit_s or self.limits.test_timeout_s

    def execution(self) -> ExecutionResult:
        """Run the sample's tests (once) and return every test case's outcome.

        Raises:
            InfraError: no runner for the language, or the sandbox/toolchain failed.
        """
        if self._execution is None:
            if self.lang is None:
                raise InfraError(f"benchwright cannot execute {self.language} code (no language plug-in)")
            self._execution = self.lang.run_tests(
                self.sandbox,
                self.code,
                self.rendered.tests,
                prelude=self.rendered.prelude,
                limits=SandboxLimits(
                    wall_s=self.test_timeout_s(),
                    memory_mb=self.limits.memory_mb,
                    output_bytes=self.limits.output_bytes,
                ),
                test_timeout_s=self.test_timeout_s(),
            )
            if self._execution.infra_error:
                raise InfraError(self._execution.infra_error)
        return self._execution


class Criterion(abc.ABC):
    """A plug-in that evaluates samples. Registered under kind ``criterion``; no-argument factory."""

    name: str = "?"
    unit: str = ""
    higher_is_better: bool = True
    executes: bool = False
    """Whether it needs the sample's tests to run (and so a language plug-in)."""

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        """Whether this criterion has anything to say about ``task`` in ``language``."""
        return True

    @abc.abstractmethod
    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        """Measure one sample. The summary uses the measurement whose ``test_case`` is None.

        Raises:
            InfraError: the harness failed (the sample becomes ``infra_error``).
        """
