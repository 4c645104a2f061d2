"""``cpu-usage``, ``ram-usage`` and ``token-count``."""

from __future__ import annotations

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask


class ExecutionUsage(Criterion):
    """What the test execution of a sample used up: less is better, and a task without tests has
    nothing to measure."""

    higher_is_better = False
    executes = True

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return bool(rendered.tests)


class CpuUsage(ExecutionUsage):
    """CPU time of the test execution (the solution and its tests, not the interpreter start)."""

    name = "cpu-usage"
    unit = "ms"

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        result = ctx.execution()
        proc = result.process
        tests_cpu = result.extra.get("cpu_ms")
        score = float(tests_cpu) if isinstance(tests_cpu, (int, float)) else (proc.cpu_ms if proc else None)
        return [Measurement(score=score, unit=self.unit, details={
            "tests_cpu_ms": tests_cpu, "process_cpu_ms": proc.cpu_ms if proc else None,
            "process_wall_ms": proc.wall_ms if proc else None,
        })]


class RamUsage(ExecutionUsage):
    """Peak resident memory of the process that ran the tests."""

    name = "ram-usage"
    unit = "bytes"

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        result = ctx.execution()
        proc = result.process
        process_rss = proc.max_rss_bytes if proc else None
        # a language's own figure (the JVM's peak, not javac's) wins over the sandbox's ru_maxrss
        reported = result.extra.get("max_rss_bytes")
        tests_rss: int | None = None
        if isinstance(reported, int) and not isinstance(reported, bool):
            tests_rss = reported
        score = tests_rss if tests_rss is not None else process_rss
        return [Measurement(score=float(score) if score is not None else None, unit=self.unit,
                            details={"tests_max_rss_bytes": tests_rss,
                                     "process_max_rss_bytes": process_rss})]


class TokenCount(Criterion):
    """Prompt plus completion tokens of the generation."""

    name = "token-count"
    unit = "tokens"
    higher_is_better = False

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        g = ctx.generation
        if g.tokens_in is None and g.tokens_out is None:
            return [Measurement(score=None, unit=self.unit, verdict="n/a",
                                output="the provider reported no token counts")]
        total = (g.tokens_in or 0) + (g.tokens_out or 0)
        return [Measurement(score=float(total), unit=self.unit, details={
            "tokens_in": g.tokens_in, "tokens_out": g.tokens_out, "estimated": g.tokens_estimated,
        })]


CRITERIA = (CpuUsage, RamUsage, TokenCount)
