"""A run's results on its page: the model x criterion table with intervals, the chart, the
agents' gates, why samples failed, and the samples."""

from __future__ import annotations

from benchwright.results.reasons import notes as reason_notes
from benchwright.results.report import (
    CI_SUFFIX,
    GATE_HEADER,
    NONE,
    gate_rows,
    interval_note,
    interval_rows,
    interval_text,
    rows,
)
from benchwright.run.jsonl import SkippedLines
from benchwright.server.service import Service
from benchwright.server.ui.text import link_to, testid

SAMPLES_SHOWN = 200
"""Samples listed on a run's page; the data explorer pages through the rest."""


def show_results(service: Service, run_id: str) -> None:
    from nicegui import ui

    summary = service.summary(run_id)
    models = list(summary.get("models") or [])
    columns = [{"name": "criterion", "label": "Criterion", "field": "criterion", "align": "left"},
               {"name": "unit", "label": "Unit", "field": "unit", "align": "left"}]
    columns += [{"name": f"m{i}", "label": m, "field": f"m{i}"} for i, m in enumerate(models)]
    shown_rows = rows(summary)
    table = [{"criterion": r.label + (CI_SUFFIX if is_ci else ""), "unit": "" if is_ci else r.unit,
              **{f"m{i}": interval_text(r, m) if is_ci else r.shown(m) for i, m in enumerate(models)}}
             for r, is_ci in interval_rows(shown_rows)]
    ui.table(columns=columns, rows=table, row_key="criterion").props('data-testid="summary" dense flat')
    for line in interval_note(shown_rows):
        ui.label(line).classes("text-xs text-gray-600").props('data-testid="interval-note"')
    chart = [r for r in rows(summary) if r.unit in ("score", "ratio", "success", "0-10") and not r.count]
    if chart and models:
        # model labels reach ECharts as data only: its default tooltip escapes them (no
        # `formatter` template here, which would not) and canvas text is never markup
        ui.echart({"tooltip": {"trigger": "axis"}, "legend": {"data": models, "type": "scroll"},
                   "xAxis": {"type": "category", "data": [r.label for r in chart]},
                   "yAxis": {"type": "value"},
                   "series": [{"name": m, "type": "bar",
                               "data": [r.values.get(m) for r in chart]} for m in models]}
                  ).classes("w-full h-72")
    gates = gate_rows(summary)
    if gates:
        ui.label("Coding agents: the three gates").classes("text-lg")
        gate_columns = [{"name": f"g{i}", "label": label or "Gates", "field": f"g{i}", "align": "left",
                         "style": "white-space: normal; max-width: 28rem"}
                        for i, label in enumerate(GATE_HEADER)
                        if i < 6 or any(row[i] not in ("", NONE) for row in gates)]
        ui.table(columns=gate_columns, row_key="key", rows=[
            {"key": str(n), **{f"g{i}": cell for i, cell in enumerate(row)}} for n, row in enumerate(gates)
        ]).classes("w-full").props('data-testid="gates" dense flat wrap-cells')
    failures = summary.get("failures") or {}
    if failures:
        ui.label("Why samples failed").classes("text-lg")
        for line in reason_notes(failures):
            ui.label(line).classes("text-sm").props('data-testid="failure-reason"')
    skipped = SkippedLines()
    samples = {s["execution_id"]: s for s in service.samples(run_id, skipped=skipped)}
    if not skipped and summary.get("skipped_lines"):
        skipped = SkippedLines.model_validate(summary["skipped_lines"])
    if skipped:
        ui.label(f"{skipped.message()}; the samples they belonged to are not scored "
                 f"('benchwright run --resume {run_id}' runs them again)") \
            .classes("text-orange-800").props('data-testid="skipped-lines"')
    ui.label(f"Samples ({len(samples)})").classes("text-lg")
    if len(samples) > SAMPLES_SHOWN:
        ui.link(f"the first {SAMPLES_SHOWN} are listed; every record is in the data explorer",
                link_to("/explorer", run=run_id))
    ordered = sorted(samples.values(), key=lambda s: (s["task"], s["language"], s["model"], s["sample"]))
    for s in ordered[:SAMPLES_SHOWN]:
        agent = s["language"] == "agent"
        gates_text = (f" objective {s.get('objective', '-')}, judge {s.get('judge', '-')}, "
                      f"run badge {s.get('run-badge', '-')}") if agent else ""
        testid(ui.link(f"{s['task']} [{s['language']}] {s['model']} #{s['sample']}: {s['outcome']}{gates_text}",
                       link_to("/agent" if agent else "/sample", run_id, s["execution_id"])),
               f"sample-{s['task']}-{s['language']}-{s['model']}-{s['sample']}")
