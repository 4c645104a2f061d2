"""``benchwright report``: a run's ``summary.yaml`` as the thesis's table 3 and friends.

The main table has one row per criterion (then pass@k, the sample count and the outcome
counts) and one column per model. Values are shown the way a reader wants them (unit-test as a
percentage, RAM in KiB/MiB, times and tokens with two decimals); ``csv`` and ``json`` keep the
raw numbers. A threshold missed is marked ``✗``. ``untested`` samples (no test case applies)
and ``infra_error`` samples are never counted for or against a model: their rows stand apart,
below the others. Smaller tables give the pass rate per
language, difficulty and area.

Every mean with an uncertainty in the summary (``se``, ``ci95``, ``ci_method``) gets a row of
its own under it in ``table`` and ``markdown`` (``± SE [lo, hi]``, the method named in a note)
and ``[se]``, ``[ci95_lo]``, ``[ci95_hi]`` and ``[ci_method]`` rows in ``csv``; ``json`` is the
summary itself. ``power=True`` adds how many tasks a 5 or 10 point difference in pass rate
would need (``docs/statistics.md``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.results.formats import ReportFormat
from benchwright.results.jsonl import SkippedLines
from benchwright.results.reasons import notes as reason_notes

MISSED = "✗"
NONE = "\u2013"
"""Shown for a missing value (an en dash)."""
ORDER = ("unit-test", "cpu-usage", "ram-usage", "token-count")
"""The thesis's criteria come first, in its order; the others follow alphabetically."""
OUTCOMES = ("pass", "fail", "error")
SLICES = ("language", "difficulty", "area")
PERCENT_UNITS = ("success", "ratio")


@dataclass
class Row:
    """One row of the main table: a raw value per model, and which models miss a threshold."""

    key: str
    label: str
    unit: str
    values: dict[str, float | None]
    missed: dict[str, bool] = field(default_factory=dict)
    percent: bool = False
    count: bool = False
    apart: bool = False
    """Shown in a section of its own (``untested``, ``infra_error``)."""
    ci: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per model: ``se``, ``ci95`` and ``ci_method`` of the value, when the summary has them."""

    def shown(self, model: str) -> str:
        text = format_value(self.values.get(model), self.unit, percent=self.percent, count=self.count)
        if self.missed.get(model):
            text += f" {MISSED}"
        return text


# -- values ------------------------------------------------------------------------------------


def human_bytes(value: float) -> str:
    """``1536`` -> ``1.50 KiB``; ``3 * 2**20`` -> ``3.00 MiB``."""
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} B" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def format_value(value: float | None, unit: str | None, *, percent: bool = False, count: bool = False) -> str:
    """A raw summary value as shown in the table and in markdown."""
    if value is None:
        return NONE
    if count:
        return str(round(value))
    if percent:
        return f"{value * 100:.0f} %"
    if unit == "bytes":
        return human_bytes(value)
    if unit in ("ms", "tokens"):
        return f"{value:.2f}"
    if value == 0 or abs(value) >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def _is_percent(key: str, unit: str | None) -> bool:
    return key == "unit-test" or key.startswith("pass@") or unit in PERCENT_UNITS


# -- the rows ----------------------------------------------------------------------------------


def models_of(summary: dict[str, Any]) -> list[str]:
    models = summary.get("models") or list((summary.get("by_model") or {}).keys())
    return [str(m) for m in models]


def _criterion_order(names: set[str]) -> list[str]:
    first = [n for n in ORDER if n in names]
    return first + sorted(names - set(first))


def _pass_at_order(names: set[str]) -> list[str]:
    def k(name: str) -> tuple[int, str]:
        tail = name.removeprefix("pass@")
        return (int(tail), name) if tail.isdigit() else (10**9, name)

    return sorted(names, key=k)


def _threshold(summary: dict[str, Any], model: str, name: str) -> dict[str, Any] | None:
    row = ((summary.get("thresholds") or {}).get(model) or {}).get(name)
    return row if isinstance(row, dict) else None


def rows(summary: dict[str, Any]) -> list[Row]:
    """The main table's rows, in order, with raw values."""
    by_model: dict[str, Any] = summary.get("by_model") or {}
    models = models_of(summary)
    units: dict[str, Any] = summary.get("units") or {}
    thresholds: dict[str, Any] = summary.get("thresholds") or {}
    threshold_names = {str(n) for per in thresholds.values() for n in (per or {})}

    def data(model: str) -> dict[str, Any]:
        d = by_model.get(model)
        return d if isinstance(d, dict) else {}

    criteria: set[str] = {n for m in models for n in (data(m).get("criteria") or {})}
    pass_at: set[str] = {n for m in models for n in (data(m).get("pass_at_k") or {})}
    criteria |= {n for n in threshold_names if not n.startswith("pass@")}
    pass_at |= {n for n in threshold_names if n.startswith("pass@")}

    def missed(name: str) -> dict[str, bool]:
        out = {}
        for m in models:
            t = _threshold(summary, m, name)
            out[m] = t is not None and not t.get("met", True)
        return out

    out: list[Row] = []
    for name in _criterion_order(criteria):
        entries = {m: (data(m).get("criteria") or {}).get(name) or {} for m in models}
        unit = units.get(name) or next((e.get("unit") for e in entries.values() if e.get("unit")), None) or ""
        out.append(Row(
            key=name, label=name, unit=str(unit),
            values={m: e.get("mean") for m, e in entries.items()},
            missed=missed(name), percent=_is_percent(name, unit),
            ci={m: e for m, e in entries.items() if e.get("ci_method")},
        ))
        if name == "unit-test" and any("test_pass_ratio" in e for e in entries.values()):
            out.append(Row(
                key="unit-test:test_pass_ratio", label="unit-test (test cases passed)", unit="ratio",
                values={m: e.get("test_pass_ratio") for m, e in entries.items()}, percent=True,
            ))
    for name in _pass_at_order(pass_at):
        out.append(Row(
            key=name, label=name, unit="ratio",
            values={m: (data(m).get("pass_at_k") or {}).get(name) for m in models},
            missed=missed(name), percent=True,
            ci={m: ci for m in models if (ci := (data(m).get("pass_at_k_ci") or {}).get(name))},
        ))
    out.append(Row(key="samples", label="samples", unit="count",
                   values={m: data(m).get("samples") for m in models}, count=True))
    for outcome in OUTCOMES:
        out.append(Row(key=outcome, label=outcome, unit="samples",
                       values={m: (data(m).get("outcomes") or {}).get(outcome, 0) for m in models},
                       count=True))
    out.append(Row(key="timed_out", label="hit a time limit", unit="samples",
                   values={m: data(m).get("timed_out", 0) for m in models}, count=True))
    out.append(Row(key="suspicious", label="suspicious passes", unit="samples",
                   values={m: data(m).get("suspicious", 0) for m in models}, count=True))
    out.append(Row(key="untested", label="untested (not counted)", unit="samples",
                   values={m: (data(m).get("outcomes") or {}).get("untested", 0) for m in models},
                   count=True, apart=True))
    out.append(Row(key="infra_error", label="infra_error (not counted)", unit="samples",
                   values={m: (data(m).get("outcomes") or {}).get("infra_error", 0) for m in models},
                   count=True, apart=True))
    return out


CI_SUFFIX = " ± SE [95 % CI]"


def interval_text(row: Row, model: str) -> str:
    """``± 4.1 [78.2, 92.5] %`` (percentages in points), ``± 1.20 [12.30, 17.70]``; the bounds
    alone (``[78.2, 92.5] %``) when there is no standard error (a bootstrap's), the standard
    error alone when there are no bounds; a dash when the value has neither."""
    ci = row.ci.get(model) or {}
    se, bounds = ci.get("se"), ci.get("ci95")
    if se is None and not bounds:
        return NONE

    def f(v: float) -> str:
        return f"{v * 100:.1f}" if row.percent else format_value(v, row.unit)

    parts = [f"± {f(se)}"] if se is not None else []
    if bounds:
        parts.append(f"[{f(bounds[0])}, {f(bounds[1])}]" + (" %" if row.percent else ""))
    return " ".join(parts)


def interval_rows(all_rows: list[Row]) -> list[tuple[Row, bool]]:
    """The rows in order, each followed by its interval row when it has one (``True`` marks those)."""
    out: list[tuple[Row, bool]] = []
    for r in all_rows:
        out.append((r, False))
        if r.ci:
            out.append((r, True))
    return out


def interval_note(all_rows: list[Row]) -> list[str]:
    """Which method gave each row's interval."""
    methods: dict[str, list[str]] = {}
    for r in all_rows:
        for ci in r.ci.values():
            names = methods.setdefault(str(ci.get("ci_method")), [])
            if r.label not in names:
                names.append(r.label)
    if not methods:
        return []
    return ["± standard error [95 % interval], clustered by task (docs/statistics.md): " + "; ".join(
        f"{method} for {', '.join(names)}" for method, names in methods.items())]


def slices(summary: dict[str, Any]) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{"language": {"python": {model: pass rate}}}``; slices that only say ``(none)`` are left out."""
    models = models_of(summary)
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for key in SLICES:
        table = summary.get(f"by_{key}") or {}
        if not table or set(table) == {"(none)"}:
            continue
        out[key] = {
            str(label): {m: ((per or {}).get(m) or {}).get("pass_rate") for m in models}
            for label, per in table.items()
        }
    return out


def notes(summary: dict[str, Any]) -> list[str]:
    """Lines printed under the main table: missed thresholds, time limits and the samples that hit
    one, infra errors, skipped criteria, isolation."""
    out: list[str] = []
    for model, per in (summary.get("thresholds") or {}).items():
        for name, t in (per or {}).items():
            if t.get("met", True):
                continue
            percent = _is_percent(str(name), (summary.get("units") or {}).get(name))
            unit = "" if name.startswith("pass@") else (summary.get("units") or {}).get(name)
            value = format_value(t.get("value"), unit, percent=percent)
            limit = format_value(t.get("limit"), unit, percent=percent)
            bound = "at least" if t.get("direction", "min") == "min" else "at most"
            out.append(f"{MISSED} threshold missed: {model} {name} = {value} (needs {bound} {limit})")
    out += time_limit_notes(summary)
    infra = sum(int(((d or {}).get("outcomes") or {}).get("infra_error", 0) or 0)
                for d in (summary.get("by_model") or {}).values())
    if summary.get("failures"):
        out += reason_notes(summary["failures"])
    elif infra:
        out.append(f"{infra} sample(s) ended in infra_error (harness, sandbox or provider failure): "
                   "not counted against any model; retry with `benchwright run --resume --retry-errors`")
    untested = sum(int(((d or {}).get("outcomes") or {}).get("untested", 0) or 0)
                   for d in (summary.get("by_model") or {}).values())
    if untested:
        out.append(f"{untested} sample(s) are untested (no test case applies to the task in its language; "
                   "the code compiled or loaded): never a pass, not in pass rates or pass@k")
    out += skipped_line_notes(summary)
    out += unscored_notes(summary)
    out += energy_notes(summary)
    skipped = summary.get("skipped_criteria")
    if skipped:
        if isinstance(skipped, dict):
            items = [f"{k} ({v})" if v else str(k) for k, v in skipped.items()]
        else:
            items = [str(s) for s in skipped]
        out.append("skipped criteria: " + ", ".join(items))
    isolation = summary.get("isolation")
    if isolation == "rlimits":
        out.append("isolation: rlimits only (no sandbox)")
    elif isolation == "none":
        out.append("isolation: none (no sandbox)")
    elif isolation:
        out.append(f"isolation: {isolation}")
    return out


def skipped_line_notes(summary: dict[str, Any]) -> list[str]:
    """The lines of the run's files that could not be read (``summary.skipped_lines``), and the
    samples they leave without a verdict."""
    data = summary.get("skipped_lines")
    if not isinstance(data, dict) or not data.get("count"):
        return []
    try:
        out = [f"{MISSED} {SkippedLines.model_validate(data).message()}"]
    except ValueError:
        out = [f"{MISSED} {data['count']} line(s) of the run's files could not be read and were skipped"]
    unreadable = {str(m): int((d or {}).get("unreadable", 0) or 0)
                  for m, d in (summary.get("by_model") or {}).items() if (d or {}).get("unreadable")}
    samples = data.get("samples")
    if samples:
        per = ", ".join(f"{m} {n}" for m, n in unreadable.items())
        out.append(f"{MISSED} {samples} sample(s) have records missing and are not scored (counted as "
                   f"infra_error{'; ' + per if per else ''}); `benchwright run --resume "
                   f"{summary.get('run_id', 'RUN_ID')}` runs them again")
    return out


def unscored_notes(summary: dict[str, Any]) -> list[str]:
    """Why a criterion left samples unscored (n/a, or a judge answer with no score), once per
    criterion and reason; and the judge model's own tokens and cost per judged model."""
    reasons: dict[tuple[str, str], list[str]] = {}
    judged: list[str] = []
    for model, data in (summary.get("by_model") or {}).items():
        for name, entry in ((data or {}).get("criteria") or {}).items():
            if (entry or {}).get("unscored"):
                reason = str(entry.get("unscored_reason") or "no reason given").splitlines()[0][:200]
                reasons.setdefault((str(name), reason), []).append(f"{model} ({entry['unscored']})")
        j = (data or {}).get("judge")
        if j:
            cost = j.get("cost_usd")
            judged.append(f"judge {j.get('model')} on {model}: {j.get('answers', 0)} answers, "
                          f"{j.get('tokens_in', 0)} + {j.get('tokens_out', 0)} tokens"
                          + (f", {format_value(cost, 'USD')} USD" if cost is not None else "")
                          + " (not counted in the model's own token-count or cost)")
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # criteria with the same reason
    for (name, reason), models in sorted(reasons.items()):
        grouped.setdefault((reason, tuple(models)), []).append(name)
    out = [f"{', '.join(names)} unscored for {', '.join(models)}: {reason}"
           for (reason, models), names in grouped.items()]
    return out + judged


def energy_notes(summary: dict[str, Any]) -> list[str]:
    """The run's measured energy and CO2 (``summary.energy``, with the energy criterion on)."""
    e = summary.get("energy")
    if not isinstance(e, dict):
        return []

    def g(value: Any) -> str:
        return f"{float(value or 0):.3g}"

    samples = e.get("samples") or {}
    per = (f"; its samples: compute {g(samples.get('compute_wh'))} Wh + generation "
           f"{g(samples.get('generation_wh'))} Wh (estimated)") if samples else ""
    if e.get("wh") is None:
        return [f"energy: no measurement of the run ({e.get('error')}){per}"]
    return [f"energy: the run used {g(e['wh'])} Wh, {g(e.get('co2_g'))} gCO2e "
            f"({e.get('country') or 'world average'}, {g(e.get('carbon_intensity_g_per_kwh'))} "
            f"gCO2e/kWh) in {g(e.get('duration_s'))} s, measured by codecarbon (whole machine){per}"]


LISTED_TIMEOUTS = 20
"""Samples that hit a time limit listed per model under the table (``summary.yaml`` has all)."""


def _seconds(value: object) -> str:
    return f"{value:g} s" if isinstance(value, int | float) and not isinstance(value, bool) else "?"


def _hit(test: dict[str, Any]) -> str:
    name = test.get("test_case")
    if test.get("limit") == "sample":
        return f"{name} (the sample's wall limit, {_seconds(test.get('limit_s'))})"
    if "limit_s" in test:
        return f"{name} (limit {_seconds(test.get('limit_s'))})"
    return str(name)


def time_limit_notes(summary: dict[str, Any]) -> list[str]:
    """How the time limits were set (golden-derived), and which samples hit one, per model."""
    out: list[str] = []
    tl = summary.get("time_limits")
    if isinstance(tl, dict):
        factor = tl.get("golden_factor")
        times = f"{factor:g} x" if isinstance(factor, int | float) else "a multiple of"
        out.append(f"time limits: {times} the golden solution's time per test case, at least "
                   f"{_seconds(tl.get('golden_floor_s'))} ({tl.get('measured', 0)} task/language "
                   "pair(s) measured)")
        for kept in tl.get("kept_ceiling") or []:
            out.append(f"  ceiling kept for {kept.get('task_source')}/{kept.get('task')} "
                       f"[{kept.get('language')}]: {kept.get('reason')}")
    for model, data in (summary.get("by_model") or {}).items():
        samples = (data or {}).get("timed_out_samples") or []
        if not samples:
            continue
        out.append(f"{model}: {len(samples)} sample(s) hit a time limit:")
        for s in samples[:LISTED_TIMEOUTS]:
            tests = ", ".join(_hit(t) for t in s.get("tests") or [])
            out.append(f"  {s.get('task_source')}/{s.get('task')} [{s.get('language')}] "
                       f"sample {s.get('sample')}: {tests}")
        if len(samples) > LISTED_TIMEOUTS:
            out.append(f"  ... and {len(samples) - LISTED_TIMEOUTS} more (see summary.yaml)")
    return out


# -- rich --------------------------------------------------------------------------------------


def report_table(summary: dict[str, Any], with_notes: bool = True) -> Table:
    """The main table (criteria x models); the notes are its caption unless ``with_notes`` is off."""
    models = models_of(summary)
    caption = "\n".join(interval_note(rows(summary)) + notes(summary)) if with_notes else ""
    table = Table(title=Text(f"Run {summary.get('run_id', '')}".strip()),
                  caption=Text(caption) if caption else None,
                  caption_justify="left", caption_style="bold yellow")
    table.add_column("Criteria", style="bold")
    table.add_column("Unit")
    for m in models:
        table.add_column(Text(m), justify="right")
    all_rows = interval_rows(rows(summary))
    for i, (row, is_ci) in enumerate(all_rows):
        if is_ci:
            table.add_row(Text(CI_SUFFIX.strip()), Text(""), *[Text(interval_text(row, m)) for m in models],
                          style="dim")
            continue
        cells = [Text(row.shown(m), style="red" if row.missed.get(m) else "") for m in models]
        next_apart = i + 1 < len(all_rows) and all_rows[i + 1][0].apart
        table.add_row(Text(row.label), Text(row.unit), *cells, style="dim" if row.apart else None,
                      end_section=next_apart and not row.apart)
    return table


def slice_tables(summary: dict[str, Any]) -> list[Table]:
    """One small table per language, difficulty and area: the pass rate of each model."""
    models = models_of(summary)
    out: list[Table] = []
    for key, table_data in slices(summary).items():
        table = Table(title=f"Pass rate by {key}")
        table.add_column(key.capitalize(), style="bold")
        for m in models:
            table.add_column(Text(m), justify="right")
        for label, per in table_data.items():
            table.add_row(Text(label), *[Text(format_value(per.get(m), None, percent=True)) for m in models])
        out.append(table)
    return out


GATE_HEADER = ("Scenario", "Task", "Agent", "Objective", "Judge", "Run badge", "",
               "Model use", "Why the run badge failed")
"""The columns of :func:`gate_rows`."""
DISAGREE = "≠ gates disagree"


def model_use(row: dict[str, Any]) -> str:
    """An agent run's model traffic through benchwright's endpoint: requests, tokens, cost."""
    if row.get("model_requests") is None and row.get("tokens_in") is None:
        return NONE
    parts = [f"{row.get('model_requests') or 0} req"]
    if row.get("tokens_in") is not None or row.get("tokens_out") is not None:
        parts.append(f"{int(row.get('tokens_in') or 0):,} in / {int(row.get('tokens_out') or 0):,} out tok")
    if row.get("cost_usd") is not None:
        parts.append(f"${float(row['cost_usd']):.4f}")
    return ", ".join(parts)


def gate_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Per agent and task (:data:`GATE_HEADER`): scenario, task, agent, the three gates
    (objective with its mean score), a mark where they disagree, the agent's model use, and why
    the run badge failed (exit status, timeout, missing program, the end of stderr)."""
    out = []
    for row in summary.get("agents") or []:
        objective = str(row.get("objective") or NONE)
        if row.get("objective_score") is not None:
            objective += f" ({float(row['objective_score']):.2f})"
        out.append([str(row.get("scenario")), str(row.get("task")), str(row.get("agent")), objective,
                    str(row.get("judge") or NONE), str(row.get("run-badge") or NONE),
                    DISAGREE if row.get("disagree") else "", model_use(row),
                    str(row.get("badge_reason") or "")])
    return out


def gates_table(summary: dict[str, Any]) -> Table | None:
    """The three gates of every agent run (``None`` for a run without agents); the columns
    after the gates only where some row has something to say."""
    body = gate_rows(summary)
    if not body:
        return None
    table = Table(title="Coding agents: the three gates")
    shown = [i for i, column in enumerate(GATE_HEADER)
             if i < 6 or any(row[i] not in ("", NONE) for row in body)]
    for i in shown:
        table.add_column(GATE_HEADER[i], overflow="fold", min_width=len(GATE_HEADER[i]) if i < 6 else None)
    colour = {"PASS": "green", "FAIL": "red"}
    style = {6: "bold yellow", 8: "red"}
    for row in body:
        table.add_row(*[Text(row[i], style=colour.get(row[i].split(" ")[0], "") if i < 6 else style.get(i, ""))
                        for i in shown])
    return table


def report_renderables(summary: dict[str, Any], power: bool = False) -> list[RenderableType]:
    """What ``benchwright report`` prints, in order: the main table, its notes (full width, not
    wrapped to the table), then the pass-rate tables (and with ``power`` the tasks a difference
    needs). Print each with ``console.print``."""
    out: list[RenderableType] = [report_table(summary, with_notes=False)]
    lines = interval_note(rows(summary)) + notes(summary)
    if lines:
        out.append(Text("\n".join(lines), style="bold yellow"))
    gates = gates_table(summary)
    if gates is not None:
        out.append(gates)
    out += slice_tables(summary)
    from benchwright.results.power import power_table

    table = power_table(summary) if power else None
    if table is not None:
        out.append(table)
    return out


# -- text --------------------------------------------------------------------------------------


_MD_CONTROL = dict.fromkeys(range(32), " ")
_MD_CONTROL[127] = " "


def _md_cell(text: str) -> str:
    """A table cell as Markdown text: what a task, model or agent wrote (an agent's stderr in
    the gates table...) never becomes HTML, a link or an image where the report is rendered."""
    text = text.translate(_MD_CONTROL).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("](", "]\\(").replace("![", "!\\[").replace("`", "\\`")


def _md_table(header: list[str], body: list[list[str]], right_from: int) -> list[str]:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("| " + " | ".join("---:" if i >= right_from else "---" for i in range(len(header))) + " |")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in body]
    return lines


def report_markdown(summary: dict[str, Any], power: bool = False) -> str:
    models = models_of(summary)
    lines = [f"## Run {summary.get('run_id', '')}".rstrip(), ""]
    body = [[r.label + CI_SUFFIX, "", *[interval_text(r, m) for m in models]] if is_ci
            else [r.label, r.unit, *[r.shown(m) for m in models]] for r, is_ci in interval_rows(rows(summary))]
    lines += _md_table(["Criteria", "Unit", *models], body, right_from=2)
    extra = interval_note(rows(summary)) + notes(summary)
    if extra:
        lines.append("")
        lines += [f"> {n}  " for n in extra]
    gates = gate_rows(summary)
    if gates:
        lines += ["", "### Coding agents: the three gates", ""]
        lines += _md_table(list(GATE_HEADER), gates, right_from=len(GATE_HEADER))
    for key, table_data in slices(summary).items():
        lines += ["", f"### Pass rate by {key}", ""]
        sbody = [[label, *[format_value(per.get(m), None, percent=True) for m in models]]
                 for label, per in table_data.items()]
        lines += _md_table([key.capitalize(), *models], sbody, right_from=1)
    from benchwright.results.power import POWER_HEADER, POWER_NOTE, POWER_TITLE, power_rows

    prows = power_rows(summary) if power else []
    if prows:
        lines += ["", f"### {POWER_TITLE}", ""]
        lines += _md_table(POWER_HEADER, prows, right_from=1)
        lines += ["", f"> {POWER_NOTE}"]
    return "\n".join(lines) + "\n"


def _csv_value(value: float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def report_csv(summary: dict[str, Any]) -> str:
    """The main table with raw numbers, then one ``pass_rate[language=python]`` row per slice label."""
    models = models_of(summary)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["criterion", "unit", *models])
    for r in rows(summary):
        w.writerow([r.key, r.unit, *[_csv_value(r.values.get(m)) for m in models]])
        if r.ci:
            w.writerow([f"{r.key}[se]", r.unit, *[_csv_value((r.ci.get(m) or {}).get("se")) for m in models]])
            for i, bound in enumerate(("ci95_lo", "ci95_hi")):
                w.writerow([f"{r.key}[{bound}]", r.unit, *[
                    _csv_value(((r.ci.get(m) or {}).get("ci95") or [None, None])[i]) for m in models]])
            w.writerow([f"{r.key}[ci_method]", "", *[str((r.ci.get(m) or {}).get("ci_method") or "")
                                                     for m in models]])
    for key, table_data in slices(summary).items():
        for label, per in table_data.items():
            w.writerow([f"pass_rate[{key}={label}]", "ratio", *[_csv_value(per.get(m)) for m in models]])
    return buf.getvalue()


def render_plain(renderables: Sequence[RenderableType], width: int | None = None) -> str:
    """Rich tables (or any renderables) as plain text without colour, ``width`` columns wide
    (default 120), separated by blank lines."""
    buf = io.StringIO()
    console = Console(file=buf, width=width or 120, color_system=None, force_terminal=False,
                      legacy_windows=False, soft_wrap=False)
    for i, t in enumerate(renderables):
        if i:
            console.print()
        console.print(t)
    return buf.getvalue()


def report_text(summary: dict[str, Any], fmt: str, width: int | None = None, power: bool = False) -> str:
    """The summary in the installed report format ``fmt`` (benchwright's: ``table``, ``json``,
    ``markdown``, ``csv``); a :class:`~benchwright.errors.PluginNotFound` naming the installed
    ones for any other."""
    from benchwright.registry import registry

    return registry.create("report-format", fmt).report(summary, power=power, width=width)


class TableReport(ReportFormat):
    """The model x criterion tables as plain text (in colour on a terminal)."""

    name = "table"

    def report(self, summary: dict[str, Any], *, power: bool = False,
               width: int | None = None) -> str:
        return render_plain(report_renderables(summary, power), width)

    def renderables(self, summary: dict[str, Any], *, power: bool = False
                    ) -> Sequence[RenderableType]:
        return report_renderables(summary, power)


class JsonReport(ReportFormat):
    """The summary itself as JSON (it holds the power estimate)."""

    name = "json"

    def report(self, summary: dict[str, Any], *, power: bool = False,
               width: int | None = None) -> str:
        return json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n"


class MarkdownReport(ReportFormat):
    """The tables as Markdown (a pull-request comment, a README)."""

    name = "markdown"

    def report(self, summary: dict[str, Any], *, power: bool = False,
               width: int | None = None) -> str:
        return report_markdown(summary, power)


class CsvReport(ReportFormat):
    """One row per figure and one column per model."""

    name = "csv"

    def report(self, summary: dict[str, Any], *, power: bool = False,
               width: int | None = None) -> str:
        return report_csv(summary)


REPORT_FORMATS: tuple[type[ReportFormat], ...] = (TableReport, JsonReport, MarkdownReport, CsvReport)
"""benchwright's own report formats (registered like any plug-in's)."""
