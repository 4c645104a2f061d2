"""Per-task results of a run: one row per sample (its outcome, tests passed, first failing test),
and the model x task matrix built from them, in every report format."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field
from rich.table import Table
from rich.text import Text

from benchwright.results.record import Record, failed_test_text
from benchwright.results.summary import NOT_COUNTED

MESSAGE_CHARS = 160
"""How much of a failing test's message a row keeps (the records keep all of it)."""
SHOWN = 60
"""How much of it a matrix cell shows."""


class TaskPlace(BaseModel):
    """Which model, on which task of which source, in which language."""

    task_source: str = Field(description="The task source's name.")
    task: str = Field(description="The task's name.")
    language: str = Field(description="The language the code was written in.")
    model: str = Field(description="The model (or agent) that wrote it.")


class SampleRow(TaskPlace):
    """One sample of a run: what it scored on the unit tests, and why it did not pass."""

    sample: int = Field(description="The sample's index (0-based) among its task's samples.")
    execution_id: str = Field(description="The sample's id in records.jsonl.")
    outcome: str = Field(description="pass, fail, error, untested or infra_error; 'unknown' when no record says.")
    tests_passed: int = Field(description="Unit-test cases that passed.")
    tests_total: int = Field(description="Unit-test cases run (0: none applied, or the code did not build).")
    first_failure: str | None = Field(default=None, description=(
        "The first failing test case as 'name: status: message' (line), or the build or harness "
        f"error; at most {MESSAGE_CHARS} characters. None when the sample passed."))


class TaskCell(TaskPlace):
    """One model on one task (in one language), over its samples."""

    samples: int = Field(description="Samples of this model on this task.")
    passed: int = Field(description="Samples whose outcome is pass.")
    counted: int = Field(description="Samples that count in the pass rate (not untested, not infra_error).")
    tests_passed: int = Field(description="Unit-test cases passed, over all samples.")
    tests_total: int = Field(description="Unit-test cases run, over all samples.")
    verdict: str = Field(description=(
        "pass (every counted sample passed), fail (none did), partial (some did), or the outcome "
        "shared by all samples when none counts (untested, infra_error)."))
    first_failure: str | None = Field(default=None, description="The first failing sample's reason.")


def _clip(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def samples_of(records: Iterable[Record]) -> list[SampleRow]:
    """One row per sample, in the order samples first appear in ``records`` (read once). A
    sample that did not pass and has no failing test gets the first error a record of it gives
    (its build or harness error)."""
    rows: dict[str, SampleRow] = {}
    errors: dict[str, str] = {}
    for r in records:
        row = rows.get(r.execution_id)
        if row is None:
            row = rows[r.execution_id] = SampleRow(
                task_source=r.task_source, task=r.task, language=r.language, model=r.model, sample=r.sample,
                execution_id=r.execution_id, outcome=r.outcome or "unknown", tests_passed=0, tests_total=0)
        if r.outcome and row.outcome == "unknown":
            row.outcome = r.outcome
        if r.error and r.test_case is None:
            errors.setdefault(r.execution_id, r.error)
        if r.criterion == "unit-test" and r.test_case is not None and r.status is not None:
            row.tests_total += 1
            row.tests_passed += r.status == "pass"
            if r.status != "pass" and row.first_failure is None:
                where = f" (line {r.line})" if r.line else ""
                row.first_failure = _clip(failed_test_text(r) + where, MESSAGE_CHARS)
    for row in rows.values():
        if row.outcome != "pass" and row.first_failure is None and row.execution_id in errors:
            row.first_failure = _clip(errors[row.execution_id], MESSAGE_CHARS)
    return list(rows.values())


def matrix(rows: Sequence[SampleRow]) -> list[TaskCell]:
    """The model x task cells, in the order tasks first appear."""
    cells: dict[tuple[str, str, str, str], TaskCell] = {}
    outcomes: dict[tuple[str, str, str, str], set[str]] = {}
    for row in rows:
        key = (row.task_source, row.task, row.language, row.model)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = TaskCell(task_source=row.task_source, task=row.task, language=row.language,
                                         model=row.model, samples=0, passed=0, counted=0, tests_passed=0,
                                         tests_total=0, verdict="")
        outcomes.setdefault(key, set()).add(row.outcome)
        cell.samples += 1
        cell.passed += row.outcome == "pass"
        cell.counted += row.outcome not in NOT_COUNTED
        cell.tests_passed += row.tests_passed
        cell.tests_total += row.tests_total
        if row.outcome != "pass" and cell.first_failure is None and row.first_failure:
            cell.first_failure = row.first_failure
    for key, cell in cells.items():
        if cell.counted == 0:
            cell.verdict = "/".join(sorted(outcomes[key]))
        elif cell.passed == cell.counted:
            cell.verdict = "pass"
        else:
            cell.verdict = "fail" if cell.passed == 0 else "partial"
    return list(cells.values())


def _cell_text(cell: TaskCell | None) -> str:
    if cell is None:
        return "-"
    text = f"{cell.verdict} {cell.passed}/{cell.counted}" if cell.counted else cell.verdict
    if cell.tests_total:
        text += f", tests {cell.tests_passed}/{cell.tests_total}"
    if cell.verdict != "pass" and cell.first_failure:
        text += f": {_clip(cell.first_failure, SHOWN)}"
    return text


def _grid(cells: Sequence[TaskCell]) -> tuple[list[str], list[tuple[tuple[str, str, str], dict[str, TaskCell]]]]:
    models = list(dict.fromkeys(c.model for c in cells))
    by_task: dict[tuple[str, str, str], dict[str, TaskCell]] = {}
    for c in cells:
        by_task.setdefault((c.task_source, c.task, c.language), {})[c.model] = c
    return models, list(by_task.items())


STYLE = {"pass": "green", "fail": "red", "partial": "yellow"}


def tasks_tables(rows: Sequence[SampleRow]) -> list[Table]:
    """The matrix and the failing samples as rich tables (every name and message as plain text)."""
    models, grid = _grid(matrix(rows))
    table = Table(title="Per task: verdict, samples passed / counted, tests passed, first failure")
    table.add_column("Task")
    table.add_column("Language")
    for m in models:
        table.add_column(Text(m))
    for (source, task, lang), per in grid:
        label = Text(task if source == grid[0][0][0] else f"{source}/{task}")
        table.add_row(label, Text(lang), *[Text(_cell_text(per.get(m)), style=STYLE.get(
            per[m].verdict if m in per else "", "")) for m in models])
    failing = [r for r in rows if r.outcome != "pass"]
    out = [table]
    if failing:
        ft = Table(title=f"Samples that did not pass ({len(failing)})")
        for col in ("Model", "Task", "Language", "Sample", "Outcome", "Tests", "Why"):
            ft.add_column(col)
        for r in failing:
            ft.add_row(Text(r.model), Text(r.task), Text(r.language), str(r.sample), Text(r.outcome),
                       f"{r.tests_passed}/{r.tests_total}", Text(r.first_failure or ""))
        out.append(ft)
    return out


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;") \
        .replace("`", "\\`")


def tasks_markdown(rows: Sequence[SampleRow]) -> str:
    """The matrix and the failing samples as markdown (for a pull-request comment)."""
    models, grid = _grid(matrix(rows))
    lines = ["### Per task", "", "| Task | Language | " + " | ".join(_md(m) for m in models) + " |",
             "| --- | --- | " + " | ".join("---" for _ in models) + " |"]
    for (source, task, lang), per in grid:
        lines.append(f"| {_md(f'{source}/{task}')} | {_md(lang)} | "
                     + " | ".join(_md(_cell_text(per.get(m))) for m in models) + " |")
    failing = [r for r in rows if r.outcome != "pass"]
    if failing:
        lines += ["", f"### Samples that did not pass ({len(failing)})", "",
                  "| Model | Task | Language | Sample | Outcome | Tests | Why |", "| --- | --- | --- | ---: | --- | ---: | --- |"]
        lines += [f"| {_md(r.model)} | {_md(r.task)} | {_md(r.language)} | {r.sample} | {_md(r.outcome)} | "
                  f"{r.tests_passed}/{r.tests_total} | {_md(r.first_failure or '')} |" for r in failing]
    return "\n".join(lines) + "\n"


def tasks_csv(rows: Sequence[SampleRow]) -> str:
    """One row per sample."""
    buf = io.StringIO()
    fields = list(SampleRow.model_fields)
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    for r in rows:
        w.writerow(["" if v is None else v for v in r.model_dump().values()])
    return buf.getvalue()


def tasks_json(rows: Sequence[SampleRow]) -> str:
    """The matrix's cells and the samples."""
    return json.dumps({"tasks": [c.model_dump() for c in matrix(rows)],
                       "samples": [r.model_dump() for r in rows]}, indent=2, ensure_ascii=False) + "\n"
