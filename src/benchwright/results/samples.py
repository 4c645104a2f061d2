"""A run's samples at a glance, from one pass over its records: the samples in the run's order
(task source, task, language, model, sample), the values each explorer filter can take, the
model x task matrix (how many samples of each task passed) and each sample's neighbours.

A sample's ``gates`` are an agent run's three verdicts (``objective``, ``judge``,
``run-badge``), upper case; the objective checks and the judge *disagree* when one says PASS
and the other FAIL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from benchwright.results.jsonl import SkippedLines

FACETS = ("model", "task", "criterion", "verdict", "language", "outcome")
"""The record fields the data explorer filters on, each with the values present."""
GATES = ("objective", "judge", "run-badge")
NOT_RUN = "not run"
"""A matrix cell of a model that has no sample of the task."""


class SampleInfo(BaseModel):
    """One sample (or agent run) as a list or a matrix shows it."""

    execution_id: str
    task_source: str
    task: str
    language: str
    model: str
    sample: int
    outcome: str | None = None
    gates: dict[str, str] = Field(default_factory=dict)
    """For an agent run: ``objective``, ``judge`` and ``run-badge`` -> PASS, FAIL or N/A."""

    @property
    def agent(self) -> bool:
        return self.language == "agent"

    @property
    def disagree(self) -> bool:
        return disagree(self.gates)

    def order(self) -> tuple[str, str, str, str, int]:
        return (self.task_source, self.task, self.language, self.model, self.sample)


class RunIndex(BaseModel):
    """What one pass over a run's records tells the pages."""

    samples: list[SampleInfo] = Field(default_factory=list)
    """In the run's order."""
    facets: dict[str, list[str]] = Field(default_factory=dict)
    """Per :data:`FACETS` field, the values its records hold, sorted."""
    models: list[str] = Field(default_factory=list)
    """In the order they first appear."""
    skipped: SkippedLines = Field(default_factory=SkippedLines)


def disagree(gates: dict[str, str]) -> bool:
    """Whether the objective checks and the judge gave opposite verdicts (PASS against FAIL)."""
    pair = {gates.get("objective"), gates.get("judge")}
    return pair == {"PASS", "FAIL"}


def index_records(records: Iterable[dict[str, Any]], skipped: SkippedLines | None = None) -> RunIndex:
    """The samples, the filter values and the models of ``records`` (dicts of the record keys)."""
    samples: dict[str, SampleInfo] = {}
    facets: dict[str, set[str]] = {f: set() for f in FACETS}
    models: dict[str, None] = {}
    for rec in records:
        eid = str(rec.get("execution_id"))
        s = samples.get(eid)
        if s is None:
            s = samples[eid] = SampleInfo(
                execution_id=eid, task_source=str(rec.get("task_source")), task=str(rec.get("task")),
                language=str(rec.get("language")), model=str(rec.get("model")),
                sample=int(rec.get("sample") or 0), outcome=rec.get("outcome"))
            models.setdefault(s.model)
        if rec.get("criterion") in GATES:
            s.gates[str(rec["criterion"])] = str(rec.get("verdict") or "n/a").upper()
        for f in FACETS:
            value = rec.get(f)
            if value is not None:
                facets[f].add(str(value))
    return RunIndex(samples=sorted(samples.values(), key=SampleInfo.order),
                    facets={f: sorted(v) for f, v in facets.items()}, models=list(models),
                    skipped=skipped if skipped is not None else SkippedLines())


def neighbours(samples: list[SampleInfo], execution_id: str) -> dict[str, Any]:
    """The samples before and after ``execution_id`` in ``samples`` (None at either end), and
    its 1-based position among them (0 when it is not there)."""
    ids = [s.execution_id for s in samples]
    if execution_id not in ids:
        return {"previous": None, "next": None, "position": 0, "count": len(ids)}
    i = ids.index(execution_id)
    return {"previous": samples[i - 1].model_dump() if i > 0 else None,
            "next": samples[i + 1].model_dump() if i + 1 < len(ids) else None,
            "position": i + 1, "count": len(ids)}


class MatrixCell(BaseModel):
    """One model on one task: how many of its samples passed, and which sample to open."""

    state: str
    """``pass`` (every counted sample passed), ``fail`` (none did), ``partial`` (some did),
    ``error``, ``untested``, ``infra_error`` (no sample counted: the first one's outcome) or
    :data:`NOT_RUN`."""
    text: str
    passed: int = 0
    counted: int = 0
    samples: int = 0
    execution_id: str | None = None
    """The sample the cell opens: the first that did not pass, else the first."""
    agent: bool = False


class MatrixRow(BaseModel):
    """One task (task source, task, language) and a cell per model."""

    task_source: str
    task: str
    language: str
    cells: dict[str, MatrixCell]


def _cell(samples: list[SampleInfo]) -> MatrixCell:
    if not samples:
        return MatrixCell(state=NOT_RUN, text=NOT_RUN)
    counted = [s for s in samples if s.outcome in ("pass", "fail", "error")]
    passed = sum(s.outcome == "pass" for s in counted)
    opened = next((s for s in samples if s.outcome != "pass"), samples[0])
    if not counted:
        state = str(samples[0].outcome or "untested")
    elif passed == len(counted):
        state = "pass"
    elif passed:
        state = "partial"
    elif all(s.outcome == "error" for s in counted):
        state = "error"
    else:
        state = "fail"
    label = state.replace("_", " ")
    if len(samples) == 1:
        text = label
    elif not counted:
        text = f"{label} ({len(samples)})"
    else:
        text = f"{'error ' if state == 'error' else ''}{passed}/{len(counted)} pass"
        if len(counted) < len(samples):
            text += f" ({len(samples) - len(counted)} not counted)"
    return MatrixCell(state=state, text=text, passed=passed, counted=len(counted), samples=len(samples),
                      execution_id=opened.execution_id, agent=opened.agent)


def task_matrix(index: RunIndex) -> list[MatrixRow]:
    """One row per task of the run (in the run's order), one cell per model: k/n passed over
    its counted samples (``untested`` and ``infra_error`` are not counted)."""
    by_task: dict[tuple[str, str, str], dict[str, list[SampleInfo]]] = {}
    for s in index.samples:
        by_task.setdefault((s.task_source, s.task, s.language), {}).setdefault(s.model, []).append(s)
    return [MatrixRow(task_source=key[0], task=key[1], language=key[2],
                      cells={m: _cell(per.get(m, [])) for m in index.models})
            for key, per in by_task.items()]
