"""A run's results on its page: the model x criterion table with intervals, the chart, the pass
rate by language, difficulty and area, the model x task matrix, the agents' gates, why samples
failed, and the samples (one table, filtered by model, language and outcome).

Every table has the constant cell template of :mod:`benchwright.server.ui.table`: a cell is
plain text, or ``{text, cls, href, testid}`` where ``text`` is shown as text, ``cls`` is one of
the classes written here, and ``href`` a link built by :func:`rel_link`. The long ones (the
matrix, the samples) are paged on the server.
"""

from __future__ import annotations

from typing import Any

from benchwright.results.reasons import notes as reason_notes
from benchwright.results.report import (
    CI_SUFFIX,
    DISAGREE,
    GATE_HEADER,
    NONE,
    format_value,
    gate_rows,
    interval_note,
    interval_rows,
    interval_text,
    rows,
    slices,
)
from benchwright.results.samples import NOT_RUN, MatrixRow, RunIndex, SampleInfo
from benchwright.server.service import Service
from benchwright.server.ui.table import column, paged_table, results_table
from benchwright.server.ui.text import link_to, testid

STATE_CLASS = {
    "pass": "bg-green-2 text-green-10", "PASS": "bg-green-2 text-green-10",
    "fail": "bg-red-2 text-red-10", "FAIL": "bg-red-2 text-red-10",
    "partial": "bg-amber-2 text-amber-10", "error": "bg-orange-3 text-orange-10",
    "untested": "bg-blue-grey-2 text-blue-grey-10", "infra_error": "bg-purple-2 text-purple-10",
    NOT_RUN: "text-grey-6 italic", "N/A": "text-grey-7", "disagree": "bg-amber-3 text-amber-10 font-bold",
    "link": "text-primary underline",
}
"""Colours of verdicts and outcomes: pass green, fail red, some passed amber, error orange,
untested grey-blue, infra_error purple, not run grey italics."""

SAMPLE_FILTERS = ("model", "language", "outcome")
MATRIX_PAGE = 25
SAMPLES_PAGE = 25


def rel_link(depth: int, page: str, *segments: str) -> str:
    """A link to a page of the UI relative to the current page, for a table cell's ``href``
    (the browser resolves it under the UI's mount): ``depth`` is how many folders the current
    page is below the mount (``/run/<id>``: 1, ``/explorer``: 0, ``/sample/<run>/<id>``: 2)."""
    return ("../" * depth or "./") + link_to(page, *segments).lstrip("/")


def sample_page(sample: SampleInfo | dict[str, Any]) -> str:
    """``/agent`` for an agent run, ``/sample`` for a sample."""
    language = sample.language if isinstance(sample, SampleInfo) else sample.get("language")
    return "/agent" if language == "agent" else "/sample"


def coloured(text: str, state: str, href: str | None = None, tid: str | None = None) -> dict[str, Any]:
    """A table cell: ``text`` in the colour of ``state``, a link when ``href`` is given."""
    return {"text": text, "cls": STATE_CLASS.get(state, ""), "href": href, "testid": tid}


def show_results(service: Service, run_id: str) -> None:
    """Everything the run's summary and one pass over its records show."""
    from nicegui import ui

    summary = service.summary(run_id)
    models = list(summary.get("models") or [])
    _summary_table(summary, models)
    _chart(summary, models)
    index = service.run_index(run_id)
    _slice_tables(summary, models)
    _gates(summary, index, run_id)
    failures = summary.get("failures") or {}
    if failures:
        ui.label("Why samples failed").classes("text-lg")
        for line in reason_notes(failures):
            ui.label(line).classes("text-sm").props('data-testid="failure-reason"')
    _matrix(service.task_matrix(run_id), index.models, run_id)
    skipped = index.skipped
    if not skipped and summary.get("skipped_lines"):
        skipped = type(skipped).model_validate(summary["skipped_lines"])
    if skipped:
        ui.label(f"{skipped.message()}; the samples they belonged to are not scored "
                 f"('benchwright run --resume {run_id}' runs them again)") \
            .classes("text-orange-800").props('data-testid="skipped-lines"')
    _samples(index, run_id)


def _summary_table(summary: dict[str, Any], models: list[str]) -> None:
    from nicegui import ui

    columns = [column("criterion", "Criterion"), column("unit", "Unit")]
    columns += [column(f"m{i}", m, "right") for i, m in enumerate(models)]
    shown_rows = rows(summary)
    table = [{"criterion": r.label + (CI_SUFFIX if is_ci else ""), "unit": "" if is_ci else r.unit,
              **{f"m{i}": interval_text(r, m) if is_ci else r.shown(m) for i, m in enumerate(models)}}
             for r, is_ci in interval_rows(shown_rows)]
    ui.table(columns=columns, rows=table, row_key="criterion").props('data-testid="summary" dense flat')
    for line in interval_note(shown_rows):
        ui.label(line).classes("text-xs text-gray-600").props('data-testid="interval-note"')


CHART_UNITS = ("score", "ratio", "success", "0-10")
"""The criteria the chart shows: those scored 0-1 (or 0-10), one group of bars each."""


def chart_options(summary: dict[str, Any], models: list[str]) -> dict[str, Any] | None:
    """The chart's ECharts options (None when there is nothing to draw): every x label shown
    (rotated when there are many), a zero a visible sliver whose tooltip says 0, a value not
    measured no bar at all (``None``, never 0). Model and criterion names are data only: the
    default tooltip escapes them (no ``formatter`` template, which would not)."""
    chart = [r for r in rows(summary) if r.unit in CHART_UNITS and not r.count]
    if not (chart and models):
        return None
    return {
        "tooltip": {"trigger": "axis"}, "legend": {"data": models, "type": "scroll", "top": 0},
        "grid": {"containLabel": True, "top": 40, "left": 8, "right": 8, "bottom": 8},
        "xAxis": {"type": "category", "data": [r.label for r in chart],
                  "axisLabel": {"interval": 0, "rotate": 35 if len(chart) > 4 else 0}},
        "yAxis": {"type": "value"},
        "series": [{"name": m, "type": "bar", "barMinHeight": 3,
                    "data": [r.values.get(m) for r in chart]} for m in models],
    }


def _chart(summary: dict[str, Any], models: list[str]) -> None:
    """The chart, drawn once the page is in the browser: ECharts is a large script, and loading it
    with the page held back the tables' first paint; its box is there from the start."""
    from nicegui import ui

    options = chart_options(summary, models)
    if options is None:
        return
    box = ui.column().classes("w-full h-96")

    def draw() -> None:
        with box:
            testid(ui.echart(options).classes("w-full h-96"), "chart")

    ui.timer(0.05, draw, once=True)


def _slice_tables(summary: dict[str, Any], models: list[str]) -> None:
    """The pass rate of each model by language, difficulty and area (as ``benchwright report``)."""
    from nicegui import ui

    tables = slices(summary)
    if not tables:
        return
    with ui.row().classes("w-full gap-6 items-start"):
        for key, data in tables.items():
            with ui.column().classes("gap-1"):
                ui.label(f"Pass rate by {key}").classes("text-lg")
                columns = [column("label", key.capitalize())]
                columns += [column(f"m{i}", m, "right") for i, m in enumerate(models)]
                table = ui.table(columns=columns, row_key="label", rows=[
                    {"label": label, **{f"m{i}": format_value(per.get(m), None, percent=True)
                                        for i, m in enumerate(models)}}
                    for label, per in data.items()])
                testid(table.props("dense flat bordered"), f"by-{key}")


def sample_href(depth: int, run_id: str, sample: SampleInfo) -> str:
    """The link to a sample's page (or agent trace) from a page ``depth`` folders down."""
    return rel_link(depth, sample_page(sample), run_id, sample.execution_id)


def _matrix(matrix: list[MatrixRow], models: list[str], run_id: str) -> None:
    """Model x task, each cell coloured by its verdict and linked to its sample."""
    from nicegui import ui

    if not matrix or not models:
        return
    ui.label("Tasks x models").classes("text-lg")
    ui.label("pass: every sample passed; k/n pass: k of the n counted samples passed (untested and "
             "infra_error samples are not counted); a cell opens the first sample that did not pass") \
        .classes("text-xs text-gray-600")
    columns = [column("task", "Task")] + [column(f"m{i}", m, "center") for i, m in enumerate(models)]
    table_rows = []
    for n, row in enumerate(matrix):
        cells: dict[str, Any] = {}
        for i, m in enumerate(models):
            c = row.cells[m]
            href = None if c.execution_id is None else rel_link(
                1, "/agent" if c.agent else "/sample", run_id, c.execution_id)
            cells[f"m{i}"] = coloured(c.text, c.state, href, f"cell-{row.task}-{row.language}-{m}")
        table_rows.append({"key": str(n), "task": f"{row.task_source}/{row.task} [{row.language}]", **cells})
    differ = [r for r, m in zip(table_rows, matrix, strict=True) if len({c.state for c in m.cells.values()}) > 1]
    if len(models) > 1:
        only = testid(ui.checkbox(f"only the {len(differ)} task(s) where the models differ"), "matrix-differ")
    paged = paged_table(columns, table_rows, "matrix", MATRIX_PAGE)
    if len(models) > 1:
        def narrow() -> None:
            paged.show(differ if only.value else table_rows)

        only.on_value_change(narrow)


def _gates(summary: dict[str, Any], index: RunIndex, run_id: str) -> None:
    """Per agent and task: the three gates coloured, where they disagree, the model use and why
    the run badge failed (the columns after the gates only where a row has something)."""
    from nicegui import ui

    gates = gate_rows(summary)
    if not gates:
        return
    traces = {(s.task_source, s.task, s.model): s for s in index.samples if s.agent}
    ui.label("Coding agents: the three gates").classes("text-lg")
    shown = [i for i in range(len(GATE_HEADER)) if i < 6 or any(row[i] not in ("", NONE) for row in gates)]
    columns = [column(f"g{i}", GATE_HEADER[i] or "Gates") for i in shown]
    table_rows = []
    for n, row in enumerate(gates):
        cells: dict[str, Any] = {f"g{i}": row[i] for i in shown}
        trace = traces.get((row[0], row[1], row[2]))
        if trace is not None:
            cells["g2"] = coloured(row[2], "link", sample_href(1, run_id, trace), f"trace-{row[1]}-{row[2]}")
        for i in (3, 4, 5):
            cells[f"g{i}"] = coloured(row[i], row[i].split(" ")[0])
        if 6 in shown:
            cells["g6"] = coloured(row[6], "disagree" if row[6] == DISAGREE else "")
        if 8 in shown:
            cells["g8"] = coloured(row[8], "FAIL" if row[8] else "")
        table_rows.append({"key": str(n), **cells})
    results_table(columns, table_rows, "gates")


def _sample_row(s: SampleInfo, run_id: str) -> dict[str, Any]:
    outcome = s.outcome or "n/a"
    row: dict[str, Any] = {
        "key": s.execution_id,
        "sample": coloured(f"{s.task} [{s.language}] {s.model} #{s.sample}", "link", sample_href(1, run_id, s),
                           f"sample-{s.task}-{s.language}-{s.model}-{s.sample}"),
        "source": s.task_source, "model": s.model, "language": s.language,
        "outcome": coloured(outcome.replace("_", " "), outcome),
    }
    for gate in ("objective", "judge", "run-badge"):
        verdict = s.gates.get(gate)
        row[gate] = coloured(verdict, verdict) if verdict else ""
    row["disagree"] = coloured(DISAGREE, "disagree") if s.disagree else ""
    return row


def _samples(index: RunIndex, run_id: str) -> None:
    """Every sample in one table paged in the browser, filtered by model, language and outcome."""
    from nicegui import ui

    samples = index.samples
    ui.label(f"Samples ({len(samples)})").classes("text-lg")
    if not samples:
        return
    agents = any(s.agent for s in samples)
    all_rows = [_sample_row(s, run_id) for s in samples]
    options = {f: sorted({str(getattr(s, f) or "n/a") for s in samples}) for f in SAMPLE_FILTERS}
    with ui.row().classes("items-end gap-2"):
        boxes = {f: testid(ui.select(options[f], label=f, clearable=True).classes("w-48"), f"samples-{f}")
                 for f in SAMPLE_FILTERS}
        shown = testid(ui.label(), "samples-count")
        ui.link("every record, in the data explorer", link_to("/explorer", run=run_id)).classes("text-sm")
    columns = [column("sample", "Sample"), column("source", "Task source"), column("outcome", "Outcome")]
    if agents:
        columns += [column("objective", "Objective"), column("judge", "Judge"),
                    column("run-badge", "Run badge"), column("disagree", "")]
    paged = paged_table(columns, all_rows, "samples", SAMPLES_PAGE)

    def apply() -> None:
        wanted = {f: b.value for f, b in boxes.items() if b.value}
        paged.show([r for r, s in zip(all_rows, samples, strict=True)
                    if all(str(getattr(s, f) or "n/a") == v for f, v in wanted.items())])
        shown.text = f"{len(paged.rows)} of {len(samples)} samples"

    for box in boxes.values():
        box.on_value_change(apply)
    shown.text = f"{len(samples)} of {len(samples)} samples"
