"""Run folders written directly (as a finished run leaves them) with outcomes chosen per task and
model, for the results pages' tests: two models, two languages, two samples a task."""

from __future__ import annotations

from pathlib import Path

from benchwright.results.folder import RunFolder
from benchwright.results.record import Record
from benchwright.results.summary import summarize

Outcomes = dict[tuple[str, str, str], list[str]]
"""(task, language, model) -> each sample's outcome."""

BEFORE: Outcomes = {
    ("alpha", "python", "model-a"): ["pass", "pass"],
    ("alpha", "python", "model-b"): ["pass", "fail"],
    ("beta", "python", "model-a"): ["fail", "fail"],
    ("beta", "python", "model-b"): ["error", "error"],
    ("gamma", "java", "model-a"): ["untested", "untested"],
}
"""model-b never ran gamma."""
AFTER: Outcomes = {**BEFORE, ("alpha", "python", "model-a"): ["fail", "pass"],
                   ("beta", "python", "model-a"): ["pass", "pass"]}
"""alpha regressed for model-a, beta was fixed."""
DIFFICULTY = {"alpha": "easy", "beta": "hard", "gamma": "hard"}
"""Each task's difficulty (any other task is easy)."""
LONG: Outcomes = {(f"t{n:02d}", "python", model): ["fail" if n % 3 == 0 and model == "model-b" else "pass"]
                  for n in range(30) for model in ("model-a", "model-b")}
"""30 tasks x 2 models, one sample each: more rows than a page of the matrix and the samples;
model-b fails every third task (10 samples)."""
RAM_BYTES = 2.656e7


def _records(run_id: str, n: int, task: str, language: str, model: str, sample: int, outcome: str) -> list[Record]:
    base = dict(run_id=run_id, execution_id=f"{run_id}-{n:03d}", task_source="made", task=task,
                language=language, model=model, sample=sample, outcome=outcome,
                difficulty=DIFFICULTY.get(task, "easy"), area="strings")
    if outcome == "untested":
        return [Record(**base, criterion="unit-test", executor="UnitTest", unit="success", verdict="n/a")]
    passed = outcome == "pass"
    return [
        Record(**base, criterion="unit-test", executor="UnitTest", test_case="case-1", unit="success",
               score=1.0 if passed else 0.0, verdict="pass" if passed else "fail",
               status="pass" if passed else outcome, code=f"assert {task}(1) == 1\n",
               line=None if passed else 1, error=None if passed else "AssertionError"),
        Record(**base, criterion="unit-test", executor="UnitTest", unit="success",
               score=1.0 if passed else 0.0, verdict="pass" if passed else "fail"),
        Record(**base, criterion="ram-usage", executor="RamUsage", unit="bytes",
               score=RAM_BYTES + (0 if passed else 4e6)),
    ]


def make_run(ws: Path, run_id: str, outcomes: Outcomes) -> None:
    """``results/<run_id>/`` holding the records of ``outcomes``, its summary and a completed status."""
    folder = RunFolder.create(ws / "results" / run_id, {"run_id": run_id, "config": {}, "task_sources": []})
    n = 0
    for (task, language, model), per_sample in outcomes.items():
        for sample, outcome in enumerate(per_sample):
            folder.append_records(_records(run_id, n, task, language, model, sample, outcome))
            n += 1
    folder.write_summary(summarize(folder.records(), run_id))
    folder.write_status({"state": "completed", "runId": run_id, "taskSourceStatuses": {
        "made": {"total": n, "completed": n, "filteredOut": 0, "error": 0}}}, force=True)
