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
* per model in both runs and per criterion (and ``pass_rate``, the share of counted samples
  that passed): the **paired difference** over the tasks both runs scored (task-level means,
  matched by task source, task and language), with its standard error, 95 % interval and
  p-value (:func:`benchwright.results.stats.paired_difference`). A delta whose interval holds 0
  shows ``no significant difference`` (``verdict``) instead of better or worse; ``change``
  keeps the bare direction of the point estimates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.results.export import folder_summary
from benchwright.results.folder import RunFolder
from benchwright.results.formats import CompareFormat
from benchwright.results.jsonl import SkippedLines
from benchwright.results.report import (
    NONE,
    Row,
    format_value,
    human_bytes,
    models_of,
    render_plain,
    rows,
)
from benchwright.results.stats import PairedDifference, paired_difference
from benchwright.results.summary import NOT_COUNTED, higher_is_better

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
    paired: dict[str, Any] | None = None
    """The paired difference over shared tasks (:class:`~benchwright.results.stats.PairedDifference`),
    for a criterion scored per sample in both runs."""
    verdict: str = ""
    """``change``, or ``no significant difference`` when the paired interval holds 0."""


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
    paired: list[dict[str, Any]] = field(default_factory=list)
    """Per model in both runs and per criterion (and ``pass_rate``): the paired difference B - A
    over shared tasks (:class:`~benchwright.results.stats.PairedDifference`)."""
    skipped_lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per run (``a``, ``b``) whose files had lines that could not be read: those lines
    (:class:`~benchwright.results.jsonl.SkippedLines`). The samples they leave incomplete are not
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


class ScoredRecord(Protocol):
    """What a comparison reads of a record (a :class:`Record`, or a row of a server's index)."""

    @property
    def execution_id(self) -> str: ...
    @property
    def task_source(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def criterion(self) -> str: ...
    @property
    def test_case(self) -> str | None: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def score(self) -> float | None: ...


class RunReader(Protocol):
    """Where a comparison reads a run: its summary, its records, its samples with records missing."""

    def summary(self, folder: RunFolder) -> dict[str, Any]: ...

    def records(self, folder: RunFolder, skipped: SkippedLines | None = None) -> Iterable[ScoredRecord]: ...

    def damaged(self, folder: RunFolder) -> set[str]: ...


class FolderReader:
    """Reads the run folder's files (the CLI's reader; the server's keeps an index of them)."""

    def summary(self, folder: RunFolder) -> dict[str, Any]:
        return folder_summary(folder)

    def records(self, folder: RunFolder, skipped: SkippedLines | None = None) -> Iterable[ScoredRecord]:
        return folder.records(skipped)

    def damaged(self, folder: RunFolder) -> set[str]:
        return folder.scan().damaged()


def _pass_fractions(folder: RunFolder, skipped: SkippedLines, reader: RunReader) -> dict[TaskKey, tuple[int, int]]:
    """(passing samples, scored samples) per task, from the sample-level unit-test records;
    samples with records that could not be read are left out (lines added to ``skipped``)."""
    out = _fractions(reader.records(folder, skipped), set())
    return _fractions(reader.records(folder), reader.damaged(folder)) if skipped else out


Scores = dict[tuple[str, str], dict[tuple[str, str, str], list[float]]]
"""(model, criterion) -> (task source, task, language) -> the sample scores."""


def _task_scores(records: Iterable[ScoredRecord], damaged: set[str]) -> Scores:
    """Per model and criterion, every counted sample's score by task; ``pass_rate``: 1 for a
    sample that passed, 0 for one that failed or erred."""
    out: Scores = {}
    seen: set[str] = set()
    for r in records:
        if r.execution_id in damaged or r.test_case is not None or r.outcome in NOT_COUNTED:
            continue
        task = (r.task_source, r.task, r.language)
        if r.execution_id not in seen:
            seen.add(r.execution_id)
            out.setdefault((r.model, "pass_rate"), {}).setdefault(task, []).append(
                1.0 if (r.outcome or "pass") == "pass" else 0.0)
        if r.criterion != "generation" and r.score is not None:
            out.setdefault((r.model, r.criterion), {}).setdefault(task, []).append(r.score)
    return out


def _paired(a: RunFolder, b: RunFolder, models: list[str], reader: RunReader) -> list[PairedDifference]:
    sa = _task_scores(reader.records(a), reader.damaged(a))
    sb = _task_scores(reader.records(b), reader.damaged(b))
    out = []
    for model in models:
        names = [c for (m, c) in sa if m == model and (m, c) in sb]
        names.sort(key=lambda c: (c != "pass_rate", c))
        for name in names:
            direction = True if name == "pass_rate" else _direction(name)
            out.append(paired_difference(model, name, sa[(model, name)], sb[(model, name)], direction))
    return out


def _fractions(records: Iterable[ScoredRecord], damaged: set[str]) -> dict[TaskKey, tuple[int, int]]:
    out: dict[TaskKey, tuple[int, int]] = {}
    for r in records:
        if (r.criterion != "unit-test" or r.test_case is not None or r.outcome in NOT_COUNTED
                or r.execution_id in damaged):
            continue
        key = (r.task_source, r.task, r.language, r.model)
        passed, total = out.get(key, (0, 0))
        out[key] = (passed + (r.score is not None and r.score >= 1.0), total + 1)
    return out


def compare(a: RunFolder, b: RunFolder, reader: RunReader | None = None) -> ComparisonResult:
    """Compare run ``a`` (the baseline) with run ``b``, read by ``reader`` (default: their files)."""
    reader = reader if reader is not None else FolderReader()
    sa, sb = reader.summary(a), reader.summary(b)
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

    both_models = [m for m in models if m not in result.only_a and m not in result.only_b]
    paired = _paired(a, b, both_models, reader)
    result.paired = [p.model_dump(mode="json") for p in paired]
    by_key = {(p.model, p.criterion): p for p in paired}
    for d in result.deltas:
        # pass@1 is the mean over tasks of each task's pass rate: the paired pass rate's difference
        p = by_key.get((d.model, "pass_rate" if d.criterion == "pass@1" else d.criterion))
        d.verdict = d.change
        if p is not None:
            d.paired = p.model_dump(mode="json")
            if d.change in ("better", "worse") and not p.significant:
                d.verdict = "no significant difference"

    skipped = {"a": SkippedLines(), "b": SkippedLines()}
    fa, fb = _pass_fractions(a, skipped["a"], reader), _pass_fractions(b, skipped["b"], reader)
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


def _shown_diff(value: float, d: Delta) -> str:
    if d.percent:
        return f"{value * 100:.1f}"
    return human_bytes(value) if d.unit == "bytes" else format_value(value, d.unit)


def format_interval(d: Delta) -> str:
    """The paired difference's 95 % interval (percentage points for ratios), or a dash."""
    ci = (d.paired or {}).get("ci95")
    if not ci:
        return NONE
    return f"[{_shown_diff(ci[0], d)}, {_shown_diff(ci[1], d)}]" + (" pp" if d.percent else "")


def format_p(d: Delta) -> str:
    p = (d.paired or {}).get("p_value")
    if p is None:
        return NONE
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def delta_cells(d: Delta) -> list[str]:
    """A delta's row as the CLI shows it (:data:`DELTA_HEADER`): values with their units."""
    return [
        _model_label(d), d.criterion, d.unit,
        format_value(d.a, d.unit, percent=d.percent, count=d.count),
        format_value(d.b, d.unit, percent=d.percent, count=d.count),
        format_delta(d), format_interval(d), format_p(d), d.verdict,
    ]


def _flip_cells(f: Flip) -> list[str]:
    return [f.kind, f.model, f"{f.task_source}.{f.task}", f.language,
            f"{f.a_passed}/{f.a_samples}", f"{f.b_passed}/{f.b_samples}"]


DELTA_HEADER = ["Model", "Criterion", "Unit", "A", "B", "Δ (B - A)", "Paired Δ 95 % CI", "p", "Change"]
FLIP_HEADER = ["Kind", "Model", "Task", "Language", "A passed", "B passed"]


def paired_lines(result: ComparisonResult) -> list[str]:
    """One line per model's pass rate: the paired difference, its interval and p-value, and
    whether the runs can be told apart."""
    out = []
    for p in result.paired:
        if p["criterion"] != "pass_rate" or p["diff"] is None:
            continue
        ci = p["ci95"]
        interval = f" [{ci[0] * 100:.1f}, {ci[1] * 100:.1f}] pp" if ci else ""
        pval = "" if p["p_value"] is None else f", p = {p['p_value']:.3g}"
        verdict = p["verdict"] if p["verdict"] != "same" else "no difference (every task the same)"
        out.append(f"{p['model']}: pass rate B - A = {p['diff'] * 100:+.1f} pp{interval}{pval} "
                   f"({p['test']} over {p['tasks']} shared task(s)): {verdict}")
    return out


def summary_line(result: ComparisonResult) -> str:
    return (f"flips: {len(result.regressions)} regression(s), {len(result.fixes)} fix(es) over "
            f"{result.tasks_compared} task(s) in both runs; {result.tasks_only_a} only in A, "
            f"{result.tasks_only_b} only in B")


def compare_table(result: ComparisonResult) -> Table:
    """Model x criterion: A, B, delta and whether it got better."""
    table = Table(title=Text(f"A = {result.run_a}   B = {result.run_b}"))
    for h in DELTA_HEADER:
        table.add_column(h, justify="right" if h in ("A", "B", "Δ (B - A)", "Paired Δ 95 % CI", "p") else "left")
    last = None
    for d in result.deltas:
        cells = delta_cells(d)
        style = {"better": "green", "worse": "red"}.get(d.verdict, "")
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
    out: list[RenderableType] = [compare_table(result)]
    out += [Text(line, style="bold") for line in paired_lines(result)]
    out.append(Text(summary_line(result), style="bold"))
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
    lines.append(_md(["---", "---", "---", "---:", "---:", "---:", "---:", "---:", "---"]))
    lines += [_md(delta_cells(d)) for d in result.deltas]
    paired = paired_lines(result)
    if paired:
        lines += ["", *[f"{line}  " for line in paired]]
    lines += ["", "### Flips", "", summary_line(result), ""]
    if result.regressions or result.fixes:
        lines.append(_md(FLIP_HEADER))
        lines.append(_md(["---"] * len(FLIP_HEADER)))
        lines += [_md(_flip_cells(f)) for f in [*result.regressions, *result.fixes]]
    notes = skipped_notes(result)
    if notes:
        lines += ["", *[f"> {n}  " for n in notes]]
    return "\n".join(lines) + "\n"


def compare_text(result: ComparisonResult, fmt: str, width: int | None = None) -> str:
    """The comparison in the installed compare format ``fmt`` (benchwright's: ``table``,
    ``json``, ``markdown``); a :class:`~benchwright.errors.PluginNotFound` naming the
    installed ones for any other."""
    from benchwright.registry import registry

    return registry.create("compare-format", fmt).compare(result, width=width)


class TableCompare(CompareFormat):
    """The deltas and the flipped tasks as plain text (in colour on a terminal)."""

    name = "table"

    def compare(self, result: ComparisonResult, *, width: int | None = None) -> str:
        return render_plain(compare_renderables(result), width)

    def renderables(self, result: ComparisonResult) -> Sequence[RenderableType]:
        return compare_renderables(result)


class JsonCompare(CompareFormat):
    """The comparison as JSON: every delta with its paired interval, every flip."""

    name = "json"

    def compare(self, result: ComparisonResult, *, width: int | None = None) -> str:
        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


class MarkdownCompare(CompareFormat):
    """The comparison as Markdown (a pull-request comment)."""

    name = "markdown"

    def compare(self, result: ComparisonResult, *, width: int | None = None) -> str:
        return compare_markdown(result)


COMPARE_FORMATS: tuple[type[CompareFormat], ...] = (TableCompare, JsonCompare, MarkdownCompare)
"""benchwright's own compare formats (registered like any plug-in's)."""

