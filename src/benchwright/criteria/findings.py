"""Criteria that report a tool's findings (linters, type checkers, security scanners) as a
weighted, normalised score.

Normalisation, the same for every such criterion: each finding weighs what its severity class
weighs (the criterion's :attr:`FindingsCriterion.weights`); the penalty is the sum of the
weights and the score is ``1 / (1 + penalty)``. No finding scores 1; one finding of weight 1
scores 0.5; the score tends to 0 as findings pile up, and never goes below it.
"""

from __future__ import annotations

import abc
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.errors import InfraError
from benchwright.sandbox.base import ProcessResult, SandboxLimits
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

__all__ = ["Finding", "FindingsCriterion", "normalised"]


@dataclass(frozen=True)
class Finding:
    """One thing a tool reported, at a line of the extracted solution."""

    line: int | None
    """1-based line of the solution file (None when the tool gave none)."""
    rule: str
    """The tool's rule id (``F401``, ``reportUnusedImport``, ``B307``...)."""
    severity: str
    """A key of the criterion's weights (``error``, ``warning``...)."""
    message: str
    column: int | None = None

    def render(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        return f"{where}: {self.rule} [{self.severity}] {self.message}"


def normalised(penalty: float) -> float:
    """The score of a weighted penalty: ``1 / (1 + penalty)``."""
    return 1.0 / (1.0 + max(penalty, 0.0))


class FindingsCriterion(Criterion):
    """Runs a static analysis tool in the sandbox on the extracted solution.

    Subclasses set ``name``, ``languages``, ``tool``, ``weights`` and implement :meth:`findings`
    (usually with :meth:`run_tool`) and :meth:`missing`.
    """

    unit = "score"
    higher_is_better = True
    weights: ClassVar[dict[str, float]] = {"error": 1.0, "warning": 0.5, "info": 0.1}
    """Weight of a finding per severity class; a class not listed weighs 1."""
    wall_s: float = 120.0
    """How long one run of the tool may take."""

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return not self.languages or language in self.languages

    @abc.abstractmethod
    def findings(self, ctx: SampleContext) -> list[Finding]:
        """What the tool reports on ``ctx.code``.

        Raises:
            InfraError: the tool failed (not the solution's fault).
        """

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        return [self.measurement(self.findings(ctx))]

    def weight(self, finding: Finding) -> float:
        return self.weights.get(finding.severity, 1.0)

    def measurement(self, found: list[Finding]) -> Measurement:
        """The sample's record: the score, every finding (with its line) in ``output`` and
        ``details``, and the counts per severity."""
        found = sorted(found, key=lambda f: (f.line if f.line is not None else 0, f.rule))
        penalty = sum(self.weight(f) for f in found)
        details: dict[str, Any] = {
            "findings": [{**asdict(f), "weight": self.weight(f)} for f in found],
            "counts": dict(Counter(f.severity for f in found)),
            "penalty": penalty,
            "weights": dict(self.weights),
        }
        lines = [f.line for f in found if f.line is not None]
        return Measurement(
            score=normalised(penalty), unit=self.unit,
            output="\n".join(f.render() for f in found) if found else "no findings",
            line=min(lines) if lines else None, details=details,
        )

    def run_tool(self, ctx: SampleContext, argv: list[str], files: dict[str, bytes], *,
                 ok: tuple[int, ...] = (0, 1), collect: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, wall_s: float | None = None) -> ProcessResult:
        """Run the tool in the sample's sandbox (no address-space limit: JVMs and Node reserve
        far more than they use).

        Raises:
            InfraError: it timed out, was killed, or ended with a status not in ``ok``.
        """
        proc = ctx.sandbox.run(argv, files=files, collect=collect, env=env, limits=SandboxLimits(
            wall_s=wall_s or self.wall_s, memory_mb=0, output_bytes=8 * 1024 * 1024,
            file_size_mb=64, processes=256))
        if proc.timed_out:
            raise InfraError(f"{self.tool} took longer than {wall_s or self.wall_s:g} s")
        if proc.exit_code not in ok:
            tail = (proc.stderr or proc.stdout).decode(errors="replace").strip()[-800:]
            status = f"exit status {proc.exit_code}" if proc.exit_code is not None else f"signal {proc.signal}"
            raise InfraError(f"{self.tool} failed ({status}): {tail}")
        return proc
