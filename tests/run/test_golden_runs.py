"""The one way golden solutions are run (``validate --golden`` and the task editor's button)."""

from __future__ import annotations

from pathlib import Path

from benchwright.results.record import Generation, Record
from benchwright.run.plan import SampleUnit
from benchwright.task.load import load_task_source
from benchwright.validation import golden_units, run_golden, sample_outcome
from benchwright.workspace import Workspace


def record(outcome: str | None) -> Record:
    rec = Record(run_id="r", execution_id="e", task_source="s", task="t", language="python", model="m",
                 sample=0, criterion="unit-test", executor="UnitTest")
    rec.outcome = outcome  # type: ignore[assignment]
    return rec


def test_a_golden_sample_without_an_outcome_is_an_error_never_a_pass() -> None:
    assert sample_outcome([]) == "error"
    assert sample_outcome([record(None)]) == "error"
    assert sample_outcome([record("fail")]) == "fail"


def test_golden_units_of_one_language_run_through_the_pipeline(workspace: Path) -> None:
    ws = Workspace.open(workspace)
    source = load_task_source(workspace / "tasks" / "basics.yaml")
    units = golden_units([source], ws, ["python"])
    assert units and {u.language for u in units} == {"python"}
    assert all(u.resolved.provider == "reference" for u in units)
    got: dict[str, str] = {}

    def on_result(unit: SampleUnit, gen: Generation, records: list[Record]) -> None:
        got[unit.task.name] = sample_outcome(records)

    run_golden(units[:2], ws, on_result)
    assert got == {u.task.name: "pass" for u in units[:2]}
