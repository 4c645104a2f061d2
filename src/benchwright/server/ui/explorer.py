"""The data explorer: records across runs, filtered, sorted and paged on the server."""

from __future__ import annotations

from typing import Any

from benchwright.run.jsonl import SkippedLines
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame
from benchwright.server.ui.text import cell, testid

EXPLORER_PAGE = 50
FILTERS = ("model", "task", "criterion", "verdict", "language", "outcome")
COLUMNS = ("run", "task", "language", "model", "sample", "criterion", "test_case", "verdict", "score", "unit",
           "outcome", "judge_verdict")


def register(service: Service, access: Access) -> None:
    from nicegui import ui

    @ui.page("/explorer")
    def explorer_page(run: str | None = None) -> None:
        if denied(access, "Data explorer"):
            return
        with frame("Data explorer", access):
            runs = [r["run_id"] for r in service.runs()]
            state: dict[str, Any] = {"offset": 0}
            with ui.row().classes("items-end gap-2"):
                chosen = ui.select(runs, value=[run] if run else runs[:1], multiple=True, label="runs") \
                    .classes("w-96").props('data-testid="runs" use-chips')
                boxes = {f: testid(ui.input(f).classes("w-32").props("clearable"), f"filter-{f}")
                         for f in FILTERS}
                sort = ui.select(list(COLUMNS), value=None, label="sort by", clearable=True).classes("w-40")
                descending = ui.checkbox("descending")
            summary = ui.label().props('data-testid="explorer-count"')
            columns = [{"name": c, "label": c.replace("_", " "), "field": c, "align": "left"} for c in COLUMNS]
            table = ui.table(columns=columns, rows=[], row_key="key").classes("w-full") \
                .props('data-testid="explorer" dense flat')

            def load() -> None:
                filters = {f: (boxes[f].value or None) for f in FILTERS}
                skipped = SkippedLines()
                total, page = service.explore(list(chosen.value or []), filters=filters, sort=sort.value,
                                              descending=bool(descending.value), offset=state["offset"],
                                              limit=EXPLORER_PAGE, skipped=skipped)
                table.rows = [{"key": f"{r['run']}:{r['execution_id']}:{r.get('record_index')}",
                               **{c: cell(r.get(c)) for c in COLUMNS}} for r in page]
                table.update()
                last = min(state["offset"] + EXPLORER_PAGE, total)
                summary.text = f"{state['offset'] + 1 if total else 0}-{last} of {total} records" + (
                    f" ({skipped.count} unreadable line(s) left out: {skipped.message()})" if skipped else "")

            def move(step: int) -> None:
                state["offset"] = max(0, state["offset"] + step * EXPLORER_PAGE)
                load()

            def apply() -> None:
                state["offset"] = 0
                load()

            with ui.row():
                ui.button("Apply", on_click=apply).props('data-testid="apply"')
                ui.button("Previous", on_click=lambda: move(-1))
                ui.button("Next", on_click=lambda: move(1)).props('data-testid="next"')
            load()
