"""The data explorer: records across runs, filtered, sorted and paged on the server; each filter
offers the values the chosen runs hold, and each row opens its sample (or agent trace)."""

from __future__ import annotations

from typing import Any

from benchwright.errors import BenchwrightError
from benchwright.results.jsonl import SkippedLines
from benchwright.results.samples import FACETS
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame
from benchwright.server.ui.results import coloured, rel_link, sample_page
from benchwright.server.ui.table import CELL, last_offset
from benchwright.server.ui.text import cell, testid

EXPLORER_PAGE = 25
FILTERS = FACETS
COLUMNS = ("run", "task", "language", "model", "sample", "criterion", "test_case", "verdict", "score", "unit",
           "outcome", "judge_verdict")
COLOURED = ("verdict", "outcome", "judge_verdict")


def page_text(offset: int, shown: int, total: int) -> str:
    """``1-25 of 25 records`` (``0-0 of 0`` for none)."""
    return f"{offset + 1 if shown else 0}-{offset + shown} of {total} records"


def _row(r: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"key": f"{r['run']}:{r['execution_id']}:{r.get('record_index')}",
                           **{c: cell(r.get(c)) for c in COLUMNS}}
    for c in COLOURED:
        if r.get(c):
            row[c] = coloured(str(r[c]), str(r[c]))
    row["task"] = coloured(str(r.get("task")), "link",
                           rel_link(0, sample_page(r), str(r["run"]), str(r["execution_id"])),
                           f"open-{r.get('task')}-{r.get('model')}-{r.get('sample')}")
    return row


def explorer_page(service: Service, access: Access, run: str | None = None) -> None:
    """Records across the chosen runs, filtered, sorted and paged on the server."""
    from nicegui import ui

    if denied(access, "Data explorer"):
        return
    with frame("Data explorer", access):
        runs = [r["run_id"] for r in service.runs()]
        state: dict[str, Any] = {"offset": 0, "total": 0}
        with ui.row().classes("items-end gap-2"):
            chosen = ui.select(runs, value=[run] if run else runs[:1], multiple=True, label="runs") \
                .classes("w-96").props('data-testid="runs" use-chips')
            boxes = {f: testid(ui.select([], label=f, clearable=True).classes("w-36"), f"filter-{f}")
                     for f in FILTERS}
            sort = ui.select(list(COLUMNS), value=None, label="sort by", clearable=True).classes("w-40")
            descending = ui.checkbox("descending")
        summary = ui.label().props('data-testid="explorer-count"')
        trouble = testid(ui.label().classes("text-red-700"), "explorer-problem")
        columns = [{"name": c, "label": c.replace("_", " "), "field": c, "align": "left"} for c in COLUMNS]
        table = ui.table(columns=columns, rows=[], row_key="key").classes("w-full") \
            .props('data-testid="explorer" dense flat')
        table.add_slot("body-cell", CELL)
        with ui.row():
            ui.button("Apply", on_click=lambda: apply()).props('data-testid="apply"')
            previous = ui.button("Previous", on_click=lambda: move(-1)).props('data-testid="previous"')
            following = ui.button("Next", on_click=lambda: move(1)).props('data-testid="next"')

        def offer() -> None:
            """Each filter's choices: the values the chosen runs hold (a chosen one kept)."""
            try:
                facets = service.explorer_facets(list(chosen.value or []))
            except BenchwrightError as e:  # a run that cannot be read: said, and nothing offered
                trouble.text = service.shown(e)
                facets = {}
            for f, box in boxes.items():
                values = facets.get(f, [])
                if box.value and box.value not in values:
                    values = [*values, box.value]
                box.set_options(values, value=box.value)

        def load() -> None:
            filters = {f: (boxes[f].value or None) for f in FILTERS}
            skipped = SkippedLines()
            try:
                total, page = service.explore(list(chosen.value or []), filters=filters, sort=sort.value,
                                              descending=bool(descending.value), offset=state["offset"],
                                              limit=EXPLORER_PAGE, skipped=skipped)
            except BenchwrightError as e:  # said where the records would be; the page goes on
                trouble.text = service.shown(e)
                total, page = 0, []
            else:
                trouble.text = ""
            if state["offset"] and state["offset"] >= total:  # the records changed under us
                state["offset"] = last_offset(total, EXPLORER_PAGE)
                return load()
            state["total"] = total
            table.rows = [_row(r) for r in page]
            table.update()
            summary.text = page_text(state["offset"], len(page), total) + (
                f" ({skipped.count} unreadable line(s) left out: {skipped.message()})" if skipped else "")
            previous.set_enabled(state["offset"] > 0)
            following.set_enabled(state["offset"] + EXPLORER_PAGE < total)

        def move(step: int) -> None:
            state["offset"] = min(max(0, state["offset"] + step * EXPLORER_PAGE), last_offset(state["total"], EXPLORER_PAGE))
            load()

        def apply() -> None:
            state["offset"] = 0
            offer()
            load()

        def refilter() -> None:
            state["offset"] = 0
            load()

        for box in boxes.values():  # a filter picked applies at once; Apply also re-reads the runs
            box.on_value_change(refilter)
        offer()
        load()


def register(service: Service, access: Access) -> None:
    """Define the ``/explorer`` page (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/explorer")
    def _explorer(run: str | None = None) -> None:
        explorer_page(service, access, run)
