"""``benchwright compare A B``: what changed between two runs.

Two parts:

* per model and criterion (and pass@k and the outcome counts): the value in A, in B and the
  delta ``B - A``; for ratios (unit-test, pass@k, coverage) also in percentage points; whether
  the change is for the better, given the criterion's direction (lower CPU time is better). A
  model found in one run only is listed with the other side empty.
* per task (task source, task, language, model): **flips**. A task's pass fraction is the
  share of its samples whose sample-level ``unit-test`` record scored 1.0 (every test case
  passed); samples that ended in ``untested`` (no test case applies) or ``infra_error`` are
  left out, so they never count as a regression or a fix. A **regression** is a fraction
  that was 1 in A (every sample passed) and is below 1 in B; a **fix** one that was below 1 in
  A and is 1 in B. Tasks present in one run only, or
  with no scored sample in one of them, are counted apart (``tasks_only_a``/``tasks_only_b``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.errors import UserError
from benchwright.results.export import folder_summary
from benchwright.results.record import Record
from benchwright.results.report import (
    NONE,
    Row,
    format_value,
    human_bytes,
    models_of,
    render_plain,
    rows,
)
from benchwright.results.summary import NOT_COUNTED, higher_is_better
from benchwright.run.folder import RunFolder
from benchwright.run.jsonl import SkippedLines

FORMATS = ("table", "json", "markdown")

Presence = Literal["both", "only_a", "only_b"]
TaskKey = tuple[str, str, str, str]
"""(task_source, task, language, model)"""


@dataclass
class Delta:
    """One model and one criterion in both runs."""

    model: str
    criterion: str
    unit: str
    a: float | None
    b: float | None
    delta: float | None
    """``b - a``, when both exist."""
    points: float | None
    """For ratios (unit-test, pass@k, ...): the delta in percentage points."""
    change: Literal["better", "worse", "same", ""]
    """``""`` when a side is missing or the row has no direction (sample counts)."""
    presence: Presence
    """Whether the model is in both runs."""
    percent: bool = False
    count: bool = False


@dataclass
class Flip:
    """A task whose pass fraction went from 1 to below 1 (regression) or back (fix)."""

    kind: Literal["regression", "fix"]
    task_source: str
    task: str
    language: str
    model: str
    a_passed: int
    a_samples: int
    b_passed: int
    b_samples: int


@dataclass
class ComparisonResult:
    run_a: str
    run_b: str
    models: list[str]
    only_a: list[str] = field(default_factory=list)
    """Models in run A only."""
    only_b: list[str] = field(default_factory=list)
    deltas: list[Delta] = field(default_factory=list)
    regressions: list[Flip] = field(default_factory=list)
    fixes: list[Flip] = field(default_factory=list)
    tasks_compared: int = 0
    tasks_only_a: int = 0
    tasks_only_b: int = 0
    skipped_lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per run (``a``, ``b``) whose files had lines that could not be read: those lines
    (:class:`~benchwright.run.jsonl.SkippedLines`). The samples they leave incomplete are not
    scored and so never flip."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- computing ---------------------------------------------------------------------------------


def _category(key: str) -> int:
    if key.startswith("pass@"):
        return 1
    if key in ("samples", "pass", "fail", "error", "untested", "infra_error"):
        return 2
    return 0


def _direction(key: str) -> bool | None:
    """True when higher is better, False when lower is, None for no direction."""
    if key in ("samples", "untested", "infra_error"):
        return None
    if key in ("fail", "error"):
        return False
    if key == "pass" or key.startswith("pass@") or key.endswith(":test_pass_ratio"):
        return True
    return higher_is_better(key)


def _delta(model: str, key: str, ra: Row | None, rb: Row | None, presence: Presence) -> Delta:
    row = ra or rb
    assert row is not None
    a = ra.values.get(model) if ra else None
    b = rb.values.get(model) if rb else None
    diff = b - a if a is not None and b is not None else None
    change: Literal["better", "worse", "same", ""] = ""
    direction = _direction(key)
    if diff is not None and direction is not None:
        change = "same" if abs(diff) < 1e-12 else "better" if (diff > 0) == direction else "worse"
    return Delta(
        model=model, criterion=row.label, unit=(ra.unit if ra and ra.unit else row.unit), a=a, b=b,
        delta=diff, points=diff * 100 if diff is not None and row.percent else None,
        change=change, presence=presence, percent=row.percent, count=row.count,
    )


def _pass_fractions(folder: RunFolder, skipped: SkippedLines) -> dict[TaskKey, tuple[int, int]]:
    """(passing samples, scored samples) per task, from the sample-level unit-test records;
    samples with records that could not be read are left out (lines added to ``skipped``)."""
    out = _fractions(folder.records(skipped), set())
    return _fractions(folder.records(), folder.scan().damaged()) if skipped else out


def _fractions(records: Iterable[Record], damaged: set[str]) -> dict[TaskKey, tuple[int, int]]:
    out: dict[TaskKey, tuple[int, int]] = {}
    for r in records:
        if (r.criterion != "unit-test" or r.test_case is not None or r.outcome in NOT_COUNTED
                or r.execution_id in damaged):
            continue
        key = (r.task_source, r.task, r.language, r.model)
        passed, total = out.get(key, (0, 0))
        out[key] = (passed + (r.score is not None and r.score >= 1.0), total + 1)
    return out


def compare(a: RunFolder, b: RunFolder) -> ComparisonResult:
    """Compare run ``a`` (the baseline) with run ``b``."""
    sa, sb = folder_summary(a), folder_summary(b)
    models_a, models_b = models_of(sa), models_of(sb)
    models = models_a + [m for m in models_b if m not in models_a]
    result = ComparisonResult(
        run_a=a.run_id, run_b=b.run_id, models=models,
        only_a=[m for m in models_a if m not in models_b],
        only_b=[m for m in models_b if m not in models_a],
    )
    rows_a = {r.key: r for r in rows(sa)}
    rows_b = {r.key: r for r in rows(sb)}
    keys = list(rows_a) + [k for k in rows_b if k not in rows_a]
    keys.sort(key=_category)  # stable: A's order first, B's new criteria after them
    for model in models:
        presence: Presence = "only_a" if model in result.only_a else "only_b" if model in result.only_b else "both"
        for key in keys:
            ra, rb = rows_a.get(key), rows_b.get(key)
            has_a = ra is not None and ra.values.get(model) is not None
            has_b = rb is not None and rb.values.get(model) is not None
            if not (has_a or has_b) and _category(key) != 2:
                continue
            result.deltas.append(_delta(model, key, ra, rb, presence))

    skipped = {"a": SkippedLines(), "b": SkippedLines()}
    fa, fb = _pass_fractions(a, skipped["a"]), _pass_fractions(b, skipped["b"])
    for side, summary in (("a", sa), ("b", sb)):
        lines = skipped[side]
        if not lines and summary.get("skipped_lines"):
            lines = SkippedLines.model_validate(summary["skipped_lines"])
        if lines:
            result.skipped_lines[side] = lines.model_dump(mode="json", exclude_none=True)
    both = [k for k in fa if k in fb and fa[k][1] and fb[k][1]]
    result.tasks_compared = len(both)
    result.tasks_only_a = sum(1 for k in fa if k not in both)
    result.tasks_only_b = sum(1 for k in fb if k not in both)
    for task in sorted(both, key=lambda k: (k[3], k[0], k[1], k[2])):
        (pa, na), (pb, nb) = fa[task], fb[task]
        all_a, all_b = pa == na, pb == nb
        if all_a == all_b:
            continue
        flip = Flip(kind="regression" if all_a else "fix", task_source=task[0], task=task[1],
                    language=task[2], model=task[3], a_passed=pa, a_samples=na, b_passed=pb, b_samples=nb)
        (result.regressions if all_a else result.fixes).append(flip)
    return result


# -- showing -----------------------------------------------------------------------------------


def _signed(value: float, text: str) -> str:
    return text if value <= 0 else f"+{text}"


def format_delta(d: Delta) -> str:
    if d.delta is None:
        return NONE
    if d.delta == 0:
        return "0"
    if d.count:
        return _signed(d.delta, str(round(d.delta)))
    if d.points is not None:
        return _signed(d.points, f"{d.points:.1f} pp")
    if d.unit == "bytes":
        return _signed(d.delta, human_bytes(d.delta))
    return _signed(d.delta, format_value(d.delta, d.unit))


def _model_label(d: Delta) -> str:
    if d.presence == "only_a":
        return f"{d.model} (only in A)"
    if d.presence == "only_b":
        return f"{d.model} (only in B)"
    return d.model


def _delta_cells(d: Delta) -> list[str]:
    return [
        _model_label(d), d.criterion, d.unit,
        format_value(d.a, d.unit, percent=d.percent, count=d.count),
        format_value(d.b, d.unit, percent=d.percent, count=d.count),
        format_delta(d), d.change,
    ]


def _flip_cells(f: Flip) -> list[str]:
    return [f.kind, f.model, f"{f.task_source}.{f.task}", f.language,
            f"{f.a_passed}/{f.a_samples}", f"{f.b_passed}/{f.b_samples}"]


DELTA_HEADER = ["Model", "Criterion", "Unit", "A", "B", "Δ (B - A)", "Change"]
FLIP_HEADER = ["Kind", "Model", "Task", "Language", "A passed", "B passed"]


def _summary_line(result: ComparisonResult) -> str:
    return (f"flips: {len(result.regressions)} regression(s), {len(result.fixes)} fix(es) over "
            f"{result.tasks_compared} task(s) in both runs; {result.tasks_only_a} only in A, "
            f"{result.tasks_only_b} only in B")


def compare_table(result: ComparisonResult) -> Table:
    """Model x criterion: A, B, delta and whether it got better."""
    table = Table(title=Text(f"A = {result.run_a}   B = {result.run_b}"))
    for h in DELTA_HEADER:
        table.add_column(h, justify="right" if h in ("A", "B", "Δ (B - A)") else "left")
    last = None
    for d in result.deltas:
        cells = _delta_cells(d)
        style = {"better": "green", "worse": "red"}.get(d.change, "")
        if last is not None and d.model != last:
            table.add_section()
        last = d.model
        table.add_row(*[Text(c) for c in cells[:-1]], Text(cells[-1], style=style))
    return table


def flips_table(result: ComparisonResult) -> Table:
    """Regressions then fixes, per task."""
    table = Table(title=Text("Flips"))
    for h in FLIP_HEADER:
        table.add_column(h)
    for f in [*result.regressions, *result.fixes]:
        cells = _flip_cells(f)
        style = "red" if f.kind == "regression" else "green"
        table.add_row(Text(cells[0], style=style), *[Text(c) for c in cells[1:]])
    return table


def compare_renderables(result: ComparisonResult) -> list[RenderableType]:
    """What ``benchwright compare`` prints, in order: the deltas, a line counting the flips, and
    the flips table when there are any. Print each with ``console.print``."""
    out: list[RenderableType] = [compare_table(result), Text(_summary_line(result), style="bold")]
    if result.regressions or result.fixes:
        out.append(flips_table(result))
    out += [Text(n, style="yellow") for n in skipped_notes(result)]
    return out


def skipped_notes(result: ComparisonResult) -> list[str]:
    """A line per run with lines that could not be read, naming the first places."""
    out = []
    for side, data in result.skipped_lines.items():
        run = result.run_a if side == "a" else result.run_b
        out.append(f"run {side.upper()} ({run}): {SkippedLines.model_validate(data).message()}; "
                   "the samples they belonged to are not scored")
    return out


def _md(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def compare_markdown(result: ComparisonResult) -> str:
    lines = [f"## Comparison: A = {result.run_a}, B = {result.run_b}", ""]
    lines.append(_md(DELTA_HEADER))
    lines.append(_md(["---", "---", "---", "---:", "---:", "---:", "---"]))
    lines += [_md(_delta_cells(d)) for d in result.deltas]
    lines += ["", "### Flips", "", _summary_line(result), ""]
    if result.regressions or result.fixes:
        lines.append(_md(FLIP_HEADER))
        lines.append(_md(["---"] * len(FLIP_HEADER)))
        lines += [_md(_flip_cells(f)) for f in [*result.regressions, *result.fixes]]
    notes = skipped_notes(result)
    if notes:
        lines += ["", *[f"> {n}  " for n in notes]]
    return "\n".join(lines) + "\n"


def compare_text(result: ComparisonResult, fmt: str, width: int | None = None) -> str:
    """The comparison as ``json``, ``markdown`` or plain-text ``table``."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return compare_markdown(result)
    if fmt == "table":
        return render_plain(compare_renderables(result), width)
    raise UserError(f"unknown compare format {fmt!r}: use one of {', '.join(FORMATS)}")

